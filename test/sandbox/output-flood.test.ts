import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { whySandboxesCannotRun } from "./helpers.js";
import { killServices, startService } from "./service-process.js";

// A tenant that writes its output one byte at a time, from many execs at once, to make the
// service hold more memory than the bytes are worth. The service runs in a process of its own,
// whose resident memory is measured while the flood goes on.
const folders: string[] = [];

afterAll(async () => {
  await killServices();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function residentMB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
}

const budgetMB = 32;
/** What the flood writes, a byte per write(2). */
const floodBytes = 3 * 1024 * 1024;

describe("output written a byte at a time", () => {
  it("grows the service's memory by no more than the output budget", {
    timeout: 90_000,
  }, async (context) => {
    const missing = await whySandboxesCannotRun();
    if (missing !== undefined) context.skip(missing);
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-flood-"));
    folders.push(dataDir);
    const running = await startService("embedded", dataDir, {
      limits: { outputBudgetBytes: budgetMB * 1024 * 1024 },
    });
    const connection = { endpoint: running.url, apiKey: running.apiKey };
    // One core is enough to flood the service (which reads every byte), and leaves the other
    // cores to the rest of the machine.
    const sandbox = await Sandbox.create({ ...connection, cpuCount: 1 });
    // Warm: the service has loaded what it needs for execs and sockets.
    await sandbox.run("echo", { args: ["warm"] });
    const pid = running.child.pid as number;
    const before = await residentMB(pid);
    const writers = [];
    for (let index = 0; index < 12; index++) {
      const writer = await sandbox.exec("sh", {
        // dash's printf builtin: one write(2) per byte, as fast as the shell goes.
        args: ["-c", "while :; do printf x; printf y >&2; done"],
      });
      writer.detach();
      writers.push(writer);
    }
    // Until the flood has written its megabytes, however busy the machine is (45 s at most).
    let peak = before;
    let written = 0;
    const givesUp = Date.now() + 45_000;
    while (written < floodBytes && Date.now() < givesUp) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      peak = Math.max(peak, await residentMB(pid));
      const execs = await sandbox.execs();
      written = execs.reduce((total, exec) => total + exec.outputBytes, 0);
    }
    await sandbox.kill();
    running.child.kill("SIGTERM");
    await running.exited;
    // The flood was real: megabytes written in single bytes.
    expect(written).toBeGreaterThanOrEqual(floodBytes);
    // The memory held is the budget, plus what a garbage-collected runtime keeps in flight.
    expect(peak - before).toBeLessThan(budgetMB + 64);
  });
});
