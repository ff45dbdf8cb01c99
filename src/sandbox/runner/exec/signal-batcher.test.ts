import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { ExecSignal } from "../../../core/wire/exec-protocol.js";
import { SignalBatcher } from "./signal-batcher.js";

describe("SignalBatcher", () => {
  it("delivers a burst of twenty thousand signals in one or two deliveries, each name once", async () => {
    const deliveries: ExecSignal[][] = [];
    const batcher = new SignalBatcher(async (names) => {
      deliveries.push([...names]);
      await nextTurn();
    });
    for (let index = 0; index < 20_000; index++) {
      batcher.add(index % 2 === 0 ? "SIGUSR1" : "SIGINT");
    }
    await nextTurn();
    await nextTurn();
    expect(deliveries).toEqual([["SIGUSR1", "SIGINT"]]);
  });

  it("delivers what arrives during a delivery in the next one", async () => {
    const deliveries: ExecSignal[][] = [];
    let release: () => void = () => undefined;
    const batcher = new SignalBatcher(async (names) => {
      deliveries.push([...names]);
      if (deliveries.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    batcher.add("SIGTERM");
    await nextTurn();
    for (let index = 0; index < 1_000; index++) batcher.add("SIGHUP");
    release();
    await nextTurn();
    expect(deliveries).toEqual([["SIGTERM"], ["SIGHUP"]]);
  });
});
