import { constants } from "node:fs";
import { access, realpath } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, exists, readOptional } from "./cgroup-files.js";
import type { CgroupDriver } from "./types.js";
import { CgroupV1Driver, type V1Controller, type V1Directories, v1Controllers } from "./v1.js";
import { CgroupV2Driver, v2Controllers } from "./v2.js";

/** Options of {@link detectCgroups}. */
export interface DetectCgroupsOptions {
  /** Names this runner's cgroups: `cairn/<runnerName>`. Default "runner". */
  readonly runnerName?: string;
  /** Where the cgroup filesystems are mounted. Default /sys/fs/cgroup. */
  readonly mountRoot?: string;
}

/** What is missing for cgroups, and the command or step that fixes it. */
export interface CgroupProblem {
  readonly ok: false;
  readonly problem: string;
  /** One step per line. */
  readonly fix: string;
}

/** Either a driver for this machine's cgroups or what keeps the runner from using them. */
export type CgroupDetection = { readonly ok: true; readonly driver: CgroupDriver } | CgroupProblem;

type Finding = { readonly ok: true } | CgroupProblem;

const runAsRoot =
  "run the runner as root (e.g. with sudo): it also needs root to start sandboxes as another uid and to mount their disks";

async function writeProblem(path: string, mountRoot: string): Promise<CgroupProblem | undefined> {
  try {
    await access(path, constants.W_OK);
    return undefined;
  } catch (error) {
    if (errorCode(error) === "EROFS") {
      return {
        ok: false,
        problem: `${path} is on a read-only mount`,
        fix: `mount -o remount,rw ${mountRoot}\n(in a container: run it with --privileged, or with --cgroupns=private on a cgroup v2 host)`,
      };
    }
    const uid = process.geteuid?.();
    const who = uid === undefined ? "" : ` by uid ${uid}${uid === 0 ? "" : " (not root)"}`;
    return { ok: false, problem: `${path} is not writable${who}`, fix: runAsRoot };
  }
}

async function checkV2(mount: string, mountRoot: string): Promise<Finding> {
  const available = ((await readOptional(join(mount, "cgroup.controllers"))) ?? "").trim();
  const missing = v2Controllers.filter(
    (controller) => !available.split(/\s+/).includes(controller),
  );
  // Only the host's root cgroup has no cgroup.type; anything else was given to us by a parent.
  const delegated = await exists(join(mount, "cgroup.type"));
  if (missing.length > 0) {
    return {
      ok: false,
      problem: `cgroup v2 at ${mount} lacks the ${missing.join(", ")} controller(s) (cgroup.controllers: "${available}")`,
      fix: delegated
        ? `enable them in the parent cgroup on the host: echo "${missing.map((name) => `+${name}`).join(" ")}" > <parent>/cgroup.subtree_control\n(for a container: --cgroupns=private on a cgroup v2 host; for a systemd unit: Delegate=yes)`
        : `boot with systemd.unified_cgroup_hierarchy=1 and without cgroup_disable=${missing.join(",")} so that cgroup v2 gets these controllers`,
    };
  }
  for (const path of [mount, join(mount, "cgroup.subtree_control")]) {
    const problem = await writeProblem(path, mountRoot);
    if (problem !== undefined) return problem;
  }
  if (delegated) {
    const enabled = ((await readOptional(join(mount, "cgroup.subtree_control"))) ?? "").split(
      /\s+/,
    );
    const procs = ((await readOptional(join(mount, "cgroup.procs"))) ?? "").trim();
    if (v2Controllers.some((controller) => !enabled.includes(controller)) && procs !== "") {
      return {
        ok: false,
        problem: `processes live in ${mount} itself, so cgroup v2 will not enable controllers for cgroups under it (only leaf cgroups may hold processes)`,
        fix: `move them into a leaf cgroup: mkdir ${mount}/init && for pid in $(cat ${mount}/cgroup.procs); do echo $pid > ${mount}/init/cgroup.procs; done`,
      };
    }
  }
  return { ok: true };
}

async function checkV1(
  mountRoot: string,
): Promise<{ readonly ok: true; readonly mounts: V1Directories } | CgroupProblem> {
  const mounts: Partial<Record<V1Controller, string>> = {};
  const missing: V1Controller[] = [];
  for (const controller of v1Controllers) {
    const directory = join(mountRoot, controller);
    if (!(await exists(join(directory, "cgroup.procs")))) {
      missing.push(controller);
      continue;
    }
    const problem = await writeProblem(directory, mountRoot);
    if (problem !== undefined) return problem;
    // cpu and cpuacct often share one mount, linked under both names.
    mounts[controller] = await realpath(directory);
  }
  const { memory, cpu, cpuacct, pids, freezer } = mounts;
  if (memory && cpu && cpuacct && pids && freezer) {
    return { ok: true, mounts: { memory, cpu, cpuacct, pids, freezer } };
  }
  return {
    ok: false,
    problem: `cgroup v1 controller(s) ${missing.join(", ")} not mounted under ${mountRoot}`,
    fix: missing
      .map((controller) => {
        const directory = join(mountRoot, controller);
        return `mkdir -p ${directory} && mount -t cgroup -o ${controller} cgroup ${directory}`;
      })
      .join("\n"),
  };
}

/**
 * Finds the cgroups this machine offers: v2 when it has the memory, cpu and pids controllers,
 * else v1 with memory, cpu, cpuacct, pids and freezer mounted and writable. Reads only: the
 * runner's cgroups are made by the driver's first `create()`.
 *
 * @example
 * const cgroups = await detectCgroups({ runnerName: "runner-1" });
 * if (!cgroups.ok) throw new Error(`${cgroups.problem}. Fix: ${cgroups.fix}`);
 * const sandbox = await cgroups.driver.create("sbx_123");
 */
export async function detectCgroups(options: DetectCgroupsOptions = {}): Promise<CgroupDetection> {
  const mountRoot = options.mountRoot ?? "/sys/fs/cgroup";
  const runnerName = options.runnerName ?? "runner";
  if (await exists(join(mountRoot, "cgroup.controllers"))) {
    const finding = await checkV2(mountRoot, mountRoot);
    if (!finding.ok) return finding;
    return { ok: true, driver: new CgroupV2Driver({ mount: mountRoot, runnerName }) };
  }
  const unified = join(mountRoot, "unified");
  const hybrid = await exists(join(unified, "cgroup.controllers"));
  if (hybrid && (await checkV2(unified, mountRoot)).ok) {
    return { ok: true, driver: new CgroupV2Driver({ mount: unified, runnerName }) };
  }
  const v1 = await checkV1(mountRoot);
  if (v1.ok) return { ok: true, driver: new CgroupV1Driver({ mounts: v1.mounts, runnerName }) };
  const anyV1 = await Promise.all(
    v1Controllers.map((controller) => exists(join(mountRoot, controller, "cgroup.procs"))),
  );
  if (!hybrid && !anyV1.includes(true)) {
    return {
      ok: false,
      problem: `no cgroup filesystem is mounted at ${mountRoot}`,
      fix: `mkdir -p ${mountRoot} && mount -t cgroup2 none ${mountRoot}`,
    };
  }
  return v1;
}
