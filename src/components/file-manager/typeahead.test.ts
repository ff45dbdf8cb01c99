import { describe, expect, it } from "vitest";
import { pathTrail } from "./paths.js";
import { TypeaheadBuffer, typeaheadIndex } from "./typeahead.js";

describe("typeahead", () => {
  const names = ["alpha", "beta", "Bravo", "charlie", "beta2"];

  it("jumps to the next name with the letters typed, case aside, wrapping", () => {
    expect(typeaheadIndex(names, 0, "b")).toBe(1);
    expect(typeaheadIndex(names, 1, "b")).toBe(2);
    expect(typeaheadIndex(names, 4, "a")).toBe(0);
    expect(typeaheadIndex(names, 1, "bet")).toBe(1);
    expect(typeaheadIndex(names, 0, "z")).toBe(-1);
  });

  it("steps through names of one letter typed again", () => {
    expect(typeaheadIndex(names, 1, "bb")).toBe(2);
  });

  it("gathers letters typed close together", () => {
    const buffer = new TypeaheadBuffer(500);
    expect(buffer.push("c", 1000)).toBe("c");
    expect(buffer.push("h", 1200)).toBe("ch");
    expect(buffer.push("a", 2000)).toBe("a");
  });
});

describe("pathTrail", () => {
  it("names each folder from the root down", () => {
    expect(pathTrail("/workspace", "/workspace/a/b")).toEqual([
      "/workspace",
      "/workspace/a",
      "/workspace/a/b",
    ]);
    expect(pathTrail("/workspace", "/etc")).toEqual(["/workspace"]);
  });
});
