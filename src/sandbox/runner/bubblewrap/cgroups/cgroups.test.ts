import { type ChildProcess, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { detectCgroups } from "./detect.js";
import type { CgroupDriver, SandboxCgroup } from "./types.js";
import { CgroupV2Driver } from "./v2.js";

// Real cgroups on this machine: needs Linux, root and cgroups (v2, or v1 with five controllers).
const runnerName = `test-${process.pid}`;
const megabyte = 1024 * 1024;
let driver: CgroupDriver | undefined;
let unavailable = "not detected yet";

beforeAll(async () => {
  if (process.platform !== "linux") unavailable = "cgroups need Linux";
  else if (process.geteuid?.() !== 0) unavailable = "making cgroups needs root";
  else {
    const detection = await detectCgroups({ runnerName });
    if (detection.ok) driver = detection.driver;
    else unavailable = `${detection.problem} (fix: ${detection.fix})`;
  }
});

afterAll(async () => {
  await driver?.removeStale();
});

/** The driver; where there is none, skips the test with the reason. */
function cgroupsOrSkip(context: TestContext): CgroupDriver {
  if (driver === undefined) context.skip(`cgroups cannot be made here: ${unavailable}`);
  return driver;
}

/**
 * Runs a shell script inside the cgroup, the way the runner's launch wrapper does: the shell
 * writes its own pid into every procs file before running anything, and exits if one fails.
 */
function startIn(cgroup: SandboxCgroup, script: string): ChildProcess {
  const joinCgroup = 'set -e; for file in "$@"; do echo $$ > "$file"; done; set +e; ';
  return spawn("/bin/sh", ["-c", joinCgroup + script, "sh", ...cgroup.procsFiles], {
    stdio: "ignore",
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

async function processesIn(cgroup: SandboxCgroup): Promise<number[]> {
  const pids = new Set<number>();
  for (const file of cgroup.procsFiles) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n")) if (line !== "") pids.add(Number(line));
  }
  return [...pids];
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(20);
  }
}

/**
 * Dead: no such process, or a zombie waiting for its parent to reap it (pid 1 here, for the
 * orphans and daemons; it reaps when it gets to it). A zombie runs nothing and uses nothing.
 */
async function isDead(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat === "" || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
}

/** The directory of the cgroup that has `file`: on v1 each controller has its own. */
async function directoryWith(cgroup: SandboxCgroup, file: string): Promise<string> {
  const candidates = [cgroup.description, ...cgroup.procsFiles.map(dirname)];
  for (const directory of candidates) {
    if (
      await readFile(join(directory, file), "utf8").then(
        () => true,
        () => false,
      )
    ) {
      return directory;
    }
  }
  throw new Error(`no ${file} in ${candidates.join(", ")}`);
}

async function readLimit(cgroup: SandboxCgroup, file: string): Promise<string> {
  return (await readFile(join(await directoryWith(cgroup, file), file), "utf8")).trim();
}

async function readLimits(version: 1 | 2, cgroup: SandboxCgroup) {
  if (version === 2) {
    return {
      memory: Number(await readLimit(cgroup, "memory.max")),
      cpu: await readLimit(cgroup, "cpu.max"),
      pids: Number(await readLimit(cgroup, "pids.max")),
    };
  }
  return {
    memory: Number(await readLimit(cgroup, "memory.limit_in_bytes")),
    cpu: `${await readLimit(cgroup, "cpu.cfs_quota_us")} ${await readLimit(cgroup, "cpu.cfs_period_us")}`,
    pids: Number(await readLimit(cgroup, "pids.max")),
  };
}

const node = process.execPath;
const busyOneSecond = `${node} -e "const end = Date.now() + 1000; while (Date.now() < end);"`;

describe("cgroups on this machine", () => {
  it("writes the limits and changes them live, up and down", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("limits");
    try {
      await sandbox.setLimits({ memoryMB: 64, cpuCount: 0.5, pids: 32 });
      expect(await readLimits(cgroups.version, sandbox)).toEqual({
        memory: 64 * megabyte,
        cpu: "50000 100000",
        pids: 32,
      });
      await sandbox.setLimits({ memoryMB: 512, cpuCount: 2, pids: 256 });
      expect(await readLimits(cgroups.version, sandbox)).toEqual({
        memory: 512 * megabyte,
        cpu: "200000 100000",
        pids: 256,
      });
      await sandbox.setLimits({ memoryMB: 128, cpuCount: 1, pids: 64 });
      expect(await readLimits(cgroups.version, sandbox)).toEqual({
        memory: 128 * megabyte,
        cpu: "100000 100000",
        pids: 64,
      });
      const swap = cgroups.version === 1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max";
      const swapLimit = await readLimit(sandbox, swap).catch(() => undefined);
      // Absent without swap accounting; else swap cannot add to the memory limit.
      if (swapLimit !== undefined) {
        expect(swapLimit).toBe(cgroups.version === 1 ? String(128 * megabyte) : "0");
      }
    } finally {
      await sandbox.destroy();
    }
  });

  it("refuses (v1) or OOM-kills (v2) when the limit is lowered under the current use", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("shrink");
    try {
      await sandbox.setLimits({ memoryMB: 512, cpuCount: 1, pids: 32 });
      const holder = startIn(
        sandbox,
        `exec ${node} -e "globalThis.b = Buffer.alloc(150 * 1024 * 1024, 1); setTimeout(() => {}, 30000)"`,
      );
      await eventually(
        () => sandbox.usage(),
        (usage) => usage.memoryCurrentBytes > 150 * megabyte,
      );
      const lowering = sandbox.setLimits({ memoryMB: 64, cpuCount: 1, pids: 32 });
      if (cgroups.version === 1) {
        await expect(lowering).rejects.toThrow(/uses more than the new limit/);
      } else {
        await lowering;
        expect((await exited(holder)).signal).toBe("SIGKILL");
      }
    } finally {
      await sandbox.destroy();
    }
  });

  it("counts a busy process's CPU time, its memory and its processes", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("usage");
    try {
      await sandbox.setLimits({ memoryMB: 256, cpuCount: 1, pids: 64 });
      const before = await sandbox.usage();
      expect(before.cpuSeconds).toBe(0);
      const busy = startIn(sandbox, `sleep 30 & exec ${busyOneSecond}`);
      const running = await eventually(
        () => sandbox.usage(),
        (usage) => usage.pids >= 2,
      );
      expect(running.pids).toBeGreaterThanOrEqual(2);
      await exited(busy);
      const after = await sandbox.usage();
      expect(after.cpuSeconds).toBeGreaterThan(0.5);
      expect(after.memoryPeakBytes).toBeGreaterThan(10 * megabyte);
      expect(after.memoryPeakBytes).toBeGreaterThanOrEqual(after.memoryCurrentBytes);
      expect(after.oomKills).toBe(0);
    } finally {
      await sandbox.destroy();
    }
  });

  it("kills a daemon and an orphan within a second, leaving nothing", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("daemons");
    try {
      const parent = startIn(sandbox, "setsid sleep 300 & (sleep 300 &); sleep 300");
      const pids = await eventually(
        () => processesIn(sandbox),
        (found) => found.length >= 3,
      );
      expect(pids.length).toBeGreaterThanOrEqual(3);
      const started = Date.now();
      await sandbox.killAll();
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await processesIn(sandbox)).toEqual([]);
      await exited(parent);
      for (const pid of pids) expect(await isDead(pid)).toBe(true);
    } finally {
      await sandbox.destroy();
    }
  });

  it("holds a fork bomb to pids.max and kills it", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("fork-bomb");
    try {
      await sandbox.setLimits({ memoryMB: 256, cpuCount: 1, pids: 32 });
      // Refuses to start unless it is inside the cgroup, where pids.max holds it.
      startIn(
        sandbox,
        "grep -q cairn /proc/self/cgroup || exit 1; f() { while :; do f & done; }; f",
      );
      let most = 0;
      for (let sample = 0; sample < 50; sample++) {
        most = Math.max(most, (await sandbox.usage()).pids);
        await sleep(10);
      }
      expect(most).toBeGreaterThan(16);
      expect(most).toBeLessThanOrEqual(32);
      const started = Date.now();
      await sandbox.killAll();
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await processesIn(sandbox)).toEqual([]);
    } finally {
      await sandbox.destroy();
    }
  });

  it("OOM-kills a process that allocates past the memory limit and counts it", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("oom");
    try {
      await sandbox.setLimits({ memoryMB: 64, cpuCount: 1, pids: 32 });
      const hog = startIn(sandbox, `exec ${node} -e "Buffer.alloc(200 * 1024 * 1024, 1)"`);
      expect((await exited(hog)).signal).toBe("SIGKILL");
      const usage = await sandbox.usage();
      expect(usage.oomKills).toBeGreaterThanOrEqual(1);
      expect(usage.memoryPeakBytes).toBeLessThanOrEqual(64 * megabyte);
    } finally {
      await sandbox.destroy();
    }
  });

  it("keeps each child's usage apart, and the sandbox's includes them", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("children");
    try {
      await sandbox.setLimits({ memoryMB: 512, cpuCount: 2, pids: 64 });
      const busyExec = await sandbox.child("exec-busy");
      const idleExec = await sandbox.child("exec-idle");
      const idle = startIn(idleExec, "exec sleep 30");
      await exited(startIn(busyExec, `exec ${busyOneSecond}`));
      const [busy, quiet, whole] = await Promise.all([
        busyExec.usage(),
        idleExec.usage(),
        sandbox.usage(),
      ]);
      expect(busy.cpuSeconds).toBeGreaterThan(0.5);
      expect(quiet.cpuSeconds).toBeLessThan(0.2);
      expect(whole.cpuSeconds).toBeGreaterThanOrEqual(busy.cpuSeconds);
      expect(busy.memoryPeakBytes).toBeGreaterThan(quiet.memoryPeakBytes);
      expect(quiet.pids).toBe(1);
      await sandbox.destroy();
      expect((await exited(idle)).signal).toBe("SIGKILL");
    } finally {
      await sandbox.destroy();
    }
  });

  it("destroys a sandbox with its children, and a second destroy is fine", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const sandbox = await cgroups.create("destroy");
    const exec = await sandbox.child("exec");
    startIn(exec, "exec sleep 30");
    const sleeper = startIn(sandbox, "exec sleep 30");
    await eventually(
      () => sandbox.usage(),
      (usage) => usage.pids >= 2,
    );
    await sandbox.destroy();
    await sandbox.destroy();
    await exec.destroy();
    expect((await exited(sleeper)).signal).toBe("SIGKILL");
    for (const file of [...sandbox.procsFiles, ...exec.procsFiles]) {
      await expect(readFile(file)).rejects.toMatchObject({ code: "ENOENT" });
    }
  });

  it("removes what an earlier run left, processes and all", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const leftover = await cgroups.create("leftover");
    const orphan = startIn(leftover, "exec sleep 300");
    await eventually(
      () => processesIn(leftover),
      (pids) => pids.length === 1,
    );
    const restarted = await detectCgroups({ runnerName });
    if (!restarted.ok) throw new Error(restarted.problem);
    await restarted.driver.removeStale();
    expect((await exited(orphan)).signal).toBe("SIGKILL");
    await expect(readFile(leftover.procsFiles[0] ?? "")).rejects.toMatchObject({
      code: "ENOENT",
    });
    // A new sandbox can be made after the runner root was removed.
    const fresh = await cgroups.create("after-stale");
    await fresh.destroy();
  });
});

describe("a runner that died in the middle of a stop", () => {
  it("left processes frozen: the next runner thaws them, kills them and removes the cgroups", async (context) => {
    const cgroups = cgroupsOrSkip(context);
    const leftover = await cgroups.create("frozen-leftover");
    const exec = await leftover.child("exec");
    const sleepers = [startIn(leftover, "exec sleep 300"), startIn(exec, "exec sleep 300")];
    const all = async () => [...(await processesIn(leftover)), ...(await processesIn(exec))];
    await eventually(all, (pids) => pids.length === 2);
    // What an older runner did before it died: froze the sandbox and SIGKILLed its processes.
    const [stateFile, frozen] =
      cgroups.version === 1
        ? [join(leftover.description.replace("/memory/", "/freezer/"), "freezer.state"), "FROZEN"]
        : [join(leftover.description, "cgroup.freeze"), "1"];
    await writeFile(stateFile, frozen);
    // Freezing takes a moment (v1 says FREEZING until every task is stopped): a SIGKILL sent
    // before it is done would kill a process the freeze had not reached yet.
    const [doneFile, isDone] =
      cgroups.version === 1
        ? [stateFile, (text: string) => text.trim() === "FROZEN"]
        : [join(leftover.description, "cgroup.events"), (text: string) => /^frozen 1$/m.test(text)];
    await eventually(() => readFile(doneFile, "utf8"), isDone);
    for (const pid of await all()) process.kill(pid, "SIGKILL");
    await sleep(200);
    expect(await all()).toHaveLength(2);
    const restarted = await detectCgroups({ runnerName });
    if (!restarted.ok) throw new Error(restarted.problem);
    await restarted.driver.removeStale();
    for (const sleeper of sleepers) expect((await exited(sleeper)).signal).toBe("SIGKILL");
    await expect(readFile(leftover.procsFiles[0] ?? "")).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});

/** A cgroup2 mount: the whole tree, or the controller-less one of a hybrid host like this one. */
async function cgroup2Mount(): Promise<string | undefined> {
  for (const mount of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    const found = await readFile(join(mount, "cgroup.controllers")).then(
      () => true,
      () => false,
    );
    if (found) return mount;
  }
  return undefined;
}

// cgroup.kill, cgroup.freeze and nesting need no controller, so v2's kill is tried for real even
// where the controllers belong to v1.
describe.each([
  { strategy: "cgroup.kill", useKillFile: true },
  { strategy: "pids.max = 0 and SIGKILL", useKillFile: false },
])("cgroup v2 killAll by $strategy", ({ useKillFile }) => {
  const name = `test-v2-${process.pid}-${useKillFile ? "kill" : "freeze"}`;
  let v2: CgroupV2Driver | undefined;

  afterAll(async () => {
    await v2?.removeStale();
  });

  it("kills a daemon, an orphan and a forking loop in the sandbox and its child", async (context) => {
    const mount = await cgroup2Mount();
    if (mount === undefined) return context.skip("no cgroup2 mount here");
    if (process.geteuid?.() !== 0) return context.skip("making cgroups needs root");
    v2 = new CgroupV2Driver({ mount, runnerName: name, controllers: [], useKillFile });
    const sandbox = await v2.create("kill");
    const exec = await sandbox.child("exec");
    startIn(sandbox, "setsid sleep 300 & (sleep 300 &); sleep 300");
    startIn(exec, "while :; do sleep 300 & sleep 0.01; done");
    const all = async () => [...(await processesIn(sandbox)), ...(await processesIn(exec))];
    const pids = await eventually(all, (found) => found.length >= 8);
    expect(pids.length).toBeGreaterThanOrEqual(8);
    const started = Date.now();
    await sandbox.killAll();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await all()).toEqual([]);
    for (const pid of pids) expect(await isDead(pid)).toBe(true);
    const frozen = await readFile(join(sandbox.description, "cgroup.freeze"), "utf8");
    expect(frozen.trim()).toBe("0");
    await sandbox.destroy();
    await sandbox.destroy();
    await expect(readFile(exec.procsFiles[0] ?? "")).rejects.toMatchObject({ code: "ENOENT" });
  });
});
