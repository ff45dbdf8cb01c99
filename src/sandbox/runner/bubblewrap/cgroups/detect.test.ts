import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectCgroups } from "./detect.js";

// Fake cgroup trees under a temp dir: what detection reads, without needing the kernel's.
let mountRoot: string;

beforeEach(async () => {
  mountRoot = await mkdtemp(join(tmpdir(), "cairn-cgroup-detect-"));
});

afterEach(async () => {
  await rm(mountRoot, { recursive: true, force: true });
});

async function files(directory: string, contents: Record<string, string>): Promise<void> {
  await mkdir(directory, { recursive: true });
  for (const [name, text] of Object.entries(contents)) {
    await writeFile(join(directory, name), text);
  }
}

async function fakeV1(controllers: readonly string[]): Promise<void> {
  for (const controller of controllers)
    await files(join(mountRoot, controller), { "cgroup.procs": "1\n" });
}

describe("detectCgroups", () => {
  it("prefers cgroup v2 when it has memory, cpu and pids", async () => {
    await files(mountRoot, {
      "cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
      "cgroup.subtree_control": "",
      "cgroup.procs": "1\n",
    });
    const detection = await detectCgroups({ mountRoot, runnerName: "r1" });
    expect(detection).toMatchObject({
      ok: true,
      driver: { version: 2, root: join(mountRoot, "cairn", "r1") },
    });
  });

  it("names the v2 controllers that are missing and how to get them", async () => {
    await files(mountRoot, {
      "cgroup.controllers": "cpuset io memory\n",
      "cgroup.subtree_control": "",
    });
    const detection = await detectCgroups({ mountRoot });
    if (detection.ok) throw new Error("expected the detection to fail");
    expect(detection.problem).toContain("lacks the cpu, pids controller(s)");
    expect(detection.fix).toContain("systemd.unified_cgroup_hierarchy=1");
  });

  it("says when processes in a delegated v2 root keep controllers from being enabled", async () => {
    await files(mountRoot, {
      "cgroup.controllers": "cpu memory pids\n",
      "cgroup.subtree_control": "",
      "cgroup.type": "domain\n",
      "cgroup.procs": "1\n42\n",
    });
    const detection = await detectCgroups({ mountRoot });
    expect(detection).toMatchObject({
      ok: false,
      problem: expect.stringContaining("only leaf cgroups"),
    });
    if (detection.ok) throw new Error("expected the detection to fail");
    expect(detection.fix).toContain(`mkdir ${mountRoot}/init`);
  });

  it("falls back to v1 on a hybrid host whose cgroup2 has no controllers", async () => {
    await files(join(mountRoot, "unified"), {
      "cgroup.controllers": "",
      "cgroup.subtree_control": "",
    });
    await fakeV1(["memory", "cpu,cpuacct", "pids", "freezer"]);
    await symlink("cpu,cpuacct", join(mountRoot, "cpu"));
    await symlink("cpu,cpuacct", join(mountRoot, "cpuacct"));
    const detection = await detectCgroups({ mountRoot, runnerName: "r2" });
    expect(detection).toMatchObject({
      ok: true,
      driver: { version: 1, root: join(mountRoot, "memory", "cairn", "r2") },
    });
  });

  it("uses the hybrid host's cgroup2 when it has the controllers", async () => {
    await files(join(mountRoot, "unified"), {
      "cgroup.controllers": "memory cpu pids\n",
      "cgroup.subtree_control": "",
    });
    await fakeV1(["memory", "cpu", "cpuacct", "pids", "freezer"]);
    const detection = await detectCgroups({ mountRoot });
    expect(detection).toMatchObject({
      ok: true,
      driver: { version: 2, root: join(mountRoot, "unified", "cairn", "runner") },
    });
  });

  it("names the v1 controller that is not mounted and the mount command", async () => {
    await fakeV1(["memory", "cpu", "cpuacct", "freezer"]);
    const detection = await detectCgroups({ mountRoot });
    expect(detection).toEqual({
      ok: false,
      problem: `cgroup v1 controller(s) pids not mounted under ${mountRoot}`,
      fix: `mkdir -p ${mountRoot}/pids && mount -t cgroup -o pids cgroup ${mountRoot}/pids`,
    });
  });

  it("says when there is no cgroup filesystem at all", async () => {
    const detection = await detectCgroups({ mountRoot: join(mountRoot, "nothing") });
    expect(detection).toMatchObject({
      ok: false,
      problem: expect.stringContaining("no cgroup filesystem"),
      fix: expect.stringContaining("mount -t cgroup2"),
    });
  });
});
