import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectCgroups } from "./cgroups/detect.js";
import { recoverRunner } from "./recovery.js";

// What runners killed with -9 leave behind, for a runner that starts later: real cgroups, so
// root and a cgroup filesystem are needed.
const parent = mkdtempSync(join(tmpdir(), "cairn-recovery-"));
const made: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const undo of made) await undo().catch(() => undefined);
  rmSync(parent, { recursive: true, force: true });
});

describe("a starting runner", () => {
  it("kills what runners that are gone left running, removes their cgroups, and leaves live ones", async (context) => {
    if (process.geteuid?.() !== 0) return context.skip("making cgroups needs root");
    const names = {
      gone: `cairn-gone${process.pid}`,
      alive: `cairn-alive${process.pid}`,
      own: `cairn-own${process.pid}`,
    };
    const drivers: Record<string, Awaited<ReturnType<typeof detectCgroups>>> = {};
    for (const [key, name] of Object.entries(names)) {
      drivers[key] = await detectCgroups({ runnerName: name });
    }
    const gone = drivers.gone;
    const alive = drivers.alive;
    const own = drivers.own;
    if (!gone?.ok || !alive?.ok || !own?.ok) {
      const problem = gone?.ok === false ? gone.problem : "none found";
      return context.skip(`no usable cgroups here: ${problem}`);
    }
    // Each has made a sandbox's cgroup, and died (or not) without removing it; the gone one's
    // sandbox still runs, as a sandbox does after its runner is killed with -9.
    const leftover = await gone.driver.create("sbx_leftover");
    const orphan = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" });
    orphan.unref();
    const orphanPid = orphan.pid as number;
    made.push(async () => void process.kill(orphanPid, "SIGKILL"));
    for (const file of leftover.procsFiles) writeFileSync(file, String(orphanPid));
    expect(await leftover.processes()).toEqual([orphanPid]);
    await alive.driver.create("sbx_running");
    made.push(
      () => alive.driver.removeStale(),
      () => gone.driver.removeStale(),
    );
    // The gone one's folder says a pid that no longer runs; the live one's says this process.
    for (const [name, pid] of [
      [names.gone, 2 ** 22 + 7],
      [names.alive, process.pid],
    ] as const) {
      mkdirSync(join(parent, name));
      writeFileSync(join(parent, name, "runner.pid"), `${pid}\n`);
    }
    await recoverRunner({ runtimeDir: join(parent, names.own), cgroups: own.driver });
    expect(existsSync(gone.driver.root)).toBe(false);
    const exited = await new Promise<boolean>((resolve) => {
      if (orphan.exitCode !== null || orphan.signalCode !== null) resolve(true);
      orphan.once("exit", () => resolve(true));
      setTimeout(() => resolve(false), 5_000);
    });
    expect(exited).toBe(true);
    expect(existsSync(alive.driver.root)).toBe(true);
    expect(existsSync(join(parent, names.gone))).toBe(false);
    expect(existsSync(join(parent, names.alive))).toBe(true);
  });
});
