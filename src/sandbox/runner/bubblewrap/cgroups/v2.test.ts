import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CgroupV2Driver } from "./v2.js";

// A fake cgroup v2 tree under a temp dir: the files the driver writes and reads, checked where a
// machine with cgroup v1 cannot show them. The kernel makes a new cgroup's files on mkdir; here
// the test writes the ones the driver reads. Killing for real is in cgroups.test.ts.
let mount: string;

beforeEach(async () => {
  mount = await mkdtemp(join(tmpdir(), "cairn-cgroup-v2-"));
  await files(mount, { "cgroup.controllers": "cpu memory pids\n", "cgroup.subtree_control": "" });
  await files(join(mount, "cairn"), { "cgroup.subtree_control": "" });
  await files(join(mount, "cairn", "runner"), { "cgroup.subtree_control": "memory" });
});

afterEach(async () => {
  await rm(mount, { recursive: true, force: true });
});

async function files(directory: string, contents: Record<string, string>): Promise<void> {
  await mkdir(directory, { recursive: true });
  for (const [name, text] of Object.entries(contents)) {
    await writeFile(join(directory, name), text);
  }
}

const read = (...path: string[]) => readFile(join(...path), "utf8");

describe("cgroup v2 files", () => {
  it("enables the controllers down to the sandbox and puts its processes in a leaf", async () => {
    const driver = new CgroupV2Driver({ mount, runnerName: "runner" });
    const sandbox = await driver.create("box");
    const root = join(mount, "cairn", "runner");
    expect(driver.root).toBe(root);
    expect(await read(mount, "cgroup.subtree_control")).toBe("+memory +cpu +pids");
    expect(await read(mount, "cairn", "cgroup.subtree_control")).toBe("+memory +cpu +pids");
    // Only what is not enabled yet is written.
    expect(await read(root, "cgroup.subtree_control")).toBe("+cpu +pids");
    expect(sandbox.description).toBe(join(root, "box"));
    expect(sandbox.procsFiles).toEqual([join(root, "box", "main", "cgroup.procs")]);
    await access(join(root, "box", "main"));
    await expect(driver.create("box")).rejects.toThrow(/already exists/);
  });

  it("writes the limits, with swap forbidden, and rewrites them", async () => {
    const sandbox = await new CgroupV2Driver({ mount, runnerName: "runner" }).create("box");
    const box = sandbox.description;
    await files(box, { "memory.swap.max": "max\n" });
    await sandbox.setLimits({ memoryMB: 64, cpuCount: 1.5, pids: 32 });
    expect(await read(box, "memory.max")).toBe(String(64 * 1024 * 1024));
    expect(await read(box, "memory.swap.max")).toBe("0");
    expect(await read(box, "cpu.max")).toBe("150000 100000");
    expect(await read(box, "pids.max")).toBe("32");
    await sandbox.setLimits({ memoryMB: 32, cpuCount: 0.25, pids: 8 });
    expect(await read(box, "memory.max")).toBe(String(32 * 1024 * 1024));
    expect(await read(box, "cpu.max")).toBe("25000 100000");
    expect(await read(box, "pids.max")).toBe("8");
  });

  it("leaves memory.swap.max alone where the kernel does not account swap", async () => {
    const sandbox = await new CgroupV2Driver({ mount, runnerName: "runner" }).create("box");
    await sandbox.setLimits({ memoryMB: 64, cpuCount: 1, pids: 32 });
    await expect(access(join(sandbox.description, "memory.swap.max"))).rejects.toThrow();
  });

  it("rejects limits that make no sense", async () => {
    const sandbox = await new CgroupV2Driver({ mount, runnerName: "runner" }).create("box");
    await expect(sandbox.setLimits({ memoryMB: 0, cpuCount: 1, pids: 32 })).rejects.toThrow(
      /memoryMB/,
    );
    await expect(sandbox.setLimits({ memoryMB: 64, cpuCount: 1, pids: 1.5 })).rejects.toThrow(
      /pids/,
    );
  });

  it("reads the usage, with the current memory where memory.peak is missing", async () => {
    const sandbox = await new CgroupV2Driver({ mount, runnerName: "runner" }).create("box");
    await files(sandbox.description, {
      "cpu.stat": "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
      "memory.current": "52428800\n",
      "memory.peak": "104857600\n",
      "pids.current": "7\n",
      "memory.events": "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n",
    });
    expect(await sandbox.usage()).toEqual({
      cpuSeconds: 2.5,
      memoryPeakBytes: 104857600,
      memoryCurrentBytes: 52428800,
      pids: 7,
      oomKills: 1,
    });
    await rm(join(sandbox.description, "memory.peak"));
    expect((await sandbox.usage()).memoryPeakBytes).toBe(52428800);
  });

  it("nests children beside the leaf, enabling the controllers for them", async () => {
    const sandbox = await new CgroupV2Driver({ mount, runnerName: "runner" }).create("box");
    await files(sandbox.description, { "cgroup.subtree_control": "" });
    const exec = await sandbox.child("exec-1");
    expect(await read(sandbox.description, "cgroup.subtree_control")).toBe("+memory +cpu +pids");
    expect(exec.description).toBe(join(sandbox.description, "exec-1"));
    expect(exec.procsFiles).toEqual([join(sandbox.description, "exec-1", "main", "cgroup.procs")]);
    await expect(sandbox.child("main")).rejects.toThrow(/reserved/);
    await expect(sandbox.child("../escape")).rejects.toThrow(/Invalid cgroup name/);
  });
});
