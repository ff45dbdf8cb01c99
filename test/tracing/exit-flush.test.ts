import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Collector, startCollector } from "../helpers/collector.js";

const fixture = fileURLToPath(new URL("../fixtures/exit-flush.ts", import.meta.url));

function run(mode: string, collector: Collector) {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, mode], {
    env: { ...process.env, COLLECTOR_URL: collector.url },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, exited, output: () => output };
}

async function waitForOutput(read: () => string, text: string, child: ChildProcess) {
  while (!read().includes(text)) {
    if (child.exitCode !== null) throw new Error(`exited before printing ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Spans are batched for 60 s in the fixture: only the exit hooks can deliver them in time.
describe("pending spans are flushed when the program stops", () => {
  let collector: Collector;
  beforeAll(async () => {
    collector = await startCollector();
  });
  afterAll(async () => {
    await collector.stop();
  });
  const names = () => collector.spans().map((span) => span.name);

  it("on a natural exit", async () => {
    const { exited } = run("natural", collector);
    const [code] = await exited;
    expect(code).toBe(0);
    expect(names()).toContain("exit-natural");
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "on %s, and the program still dies of the signal",
    async (signalName) => {
      const { child, exited, output } = run("signal", collector);
      await waitForOutput(output, "ready", child);
      const before = names().length;
      child.kill(signalName);
      const [code, signal] = await exited;
      expect({ code, signal }).toEqual({ code: null, signal: signalName });
      expect(names().slice(before)).toEqual(["exit-signal"]);
    },
  );

  it("on SIGTERM without taking over the app's own handler", async () => {
    const { child, exited, output } = run("handled", collector);
    await waitForOutput(output, "ready", child);
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    expect(output()).toContain("app handler ran");
    expect(names()).toContain("exit-handled");
  });

  it("on SIGTERM, without cutting short an app that stops asynchronously on its once-handler", async () => {
    const { child, exited, output } = run("once", collector);
    await waitForOutput(output, "ready", child);
    child.kill("SIGTERM");
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(output()).toContain("app closed");
    expect(names()).toContain("exit-once");
  });
});
