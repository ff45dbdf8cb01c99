import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { escapeThenTab } from "./escape-then-tab.js";

const keydown = (key: string) => ({ type: "keydown", key }) as KeyboardEvent;

describe("escapeThenTab", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("lets Tab alone go to the shell", () => {
    const sent: string[] = [];
    const keys = escapeThenTab((data) => sent.push(data));
    expect(keys.key(keydown("Tab"))).toBe(true);
    keys.data("\t");
    expect(sent).toEqual(["\t"]);
  });

  it("moves the focus on for Escape then Tab, sending the shell neither", () => {
    const sent: string[] = [];
    const keys = escapeThenTab((data) => sent.push(data));
    expect(keys.key(keydown("Escape"))).toBe(true);
    keys.data("\x1b");
    expect(keys.key(keydown("Tab"))).toBe(false);
    vi.runAllTimers();
    expect(sent).toEqual([]);
  });

  it("sends a held Escape before the next key, or when no key follows", () => {
    const sent: string[] = [];
    const keys = escapeThenTab((data) => sent.push(data));
    keys.data("\x1b");
    keys.data(":");
    expect(sent).toEqual(["\x1b", ":"]);
    keys.data("\x1b");
    expect(sent).toHaveLength(2);
    vi.advanceTimersByTime(200);
    expect(sent).toEqual(["\x1b", ":", "\x1b"]);
    // A Tab once the Escape has gone is the shell's again.
    expect(keys.key(keydown("Tab"))).toBe(true);
  });

  it("sends escape sequences (arrows, function keys) at once", () => {
    const sent: string[] = [];
    const keys = escapeThenTab((data) => sent.push(data));
    keys.data("\x1b[A");
    expect(sent).toEqual(["\x1b[A"]);
  });
});
