import { describe, expect, it } from "vitest";
import { repeatedInterruptWindowMs, stopSignals } from "./stop-signals.js";

function clock() {
  let time = 0;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe("stopSignals", () => {
  it("takes one Ctrl-C passed on by npm and tsx (SIGINT twice within the window) as one graceful stop", () => {
    const time = clock();
    const take = stopSignals(time.now);
    expect(take("SIGINT")).toBe("graceful");
    time.advance(30);
    expect(take("SIGINT")).toBeUndefined();
    time.advance(repeatedInterruptWindowMs - 31);
    expect(take("SIGINT")).toBeUndefined();
  });

  it("forces the stop on a second Ctrl-C pressed later, and ignores any after it", () => {
    const time = clock();
    const take = stopSignals(time.now);
    expect(take("SIGINT")).toBe("graceful");
    time.advance(repeatedInterruptWindowMs);
    expect(take("SIGINT")).toBe("force");
    time.advance(5000);
    expect(take("SIGINT")).toBeUndefined();
    expect(take("SIGTERM")).toBeUndefined();
  });

  it("takes SIGTERM as sent: a second one at once forces the stop", () => {
    const time = clock();
    const take = stopSignals(time.now);
    expect(take("SIGTERM")).toBe("graceful");
    time.advance(20);
    expect(take("SIGTERM")).toBe("force");
  });

  it("forces on SIGTERM after a SIGINT, and on SIGINT after a SIGTERM, however soon", () => {
    const afterInterrupt = stopSignals(clock().now);
    expect(afterInterrupt("SIGINT")).toBe("graceful");
    expect(afterInterrupt("SIGTERM")).toBe("force");
    const afterTerminate = stopSignals(clock().now);
    expect(afterTerminate("SIGTERM")).toBe("graceful");
    expect(afterTerminate("SIGINT")).toBe("force");
  });
});
