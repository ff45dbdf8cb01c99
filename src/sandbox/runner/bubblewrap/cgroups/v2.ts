import { basename, dirname, join } from "node:path";
import { CgroupError } from "./cgroup-error.js";
import {
  checkCgroupName,
  cpuPeriodMicroseconds,
  errorCode,
  exists,
  kernelLimits,
  leafName,
  makeCgroupDirectory,
  makeDirectoryTree,
  readKeyedNumber,
  readNumber,
  readOptional,
  readText,
  removeCgroupTree,
  writeOptional,
  writeText,
} from "./cgroup-files.js";
import {
  abandonedSiblings,
  killUntilEmpty,
  killWithoutFreezing,
  listProcesses,
  thawTree,
} from "./kill-processes.js";
import type { CgroupDriver, CgroupUsage, ResourceLimits, SandboxCgroup } from "./types.js";

/** The controllers a sandbox needs, in the kernel's names. */
export const v2Controllers = ["memory", "cpu", "pids"] as const;

export interface CgroupV2Options {
  /** The cgroup2 mount: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host. */
  readonly mount: string;
  readonly runnerName: string;
  /** Controllers to enable; a test on a hierarchy that has none passes `[]`. */
  readonly controllers?: readonly string[];
  /**
   * Kill with cgroup.kill where the kernel has it (5.14+); false stops forks with pids.max and
   * sends SIGKILL instead, as on older kernels (for tests).
   */
  readonly useKillFile?: boolean;
}

/**
 * Lets the cgroups under `directory` use the controllers. Refused while processes live in
 * `directory` itself: cgroup v2 lets only leaves hold processes once children have controllers.
 */
async function enableControllers(directory: string, controllers: readonly string[]): Promise<void> {
  const file = join(directory, "cgroup.subtree_control");
  const enabled = (await readText(file)).split(/\s+/);
  const missing = controllers.filter((controller) => !enabled.includes(controller));
  if (missing.length === 0) return;
  const names = missing.join(", ");
  try {
    await writeText(
      file,
      missing.map((controller) => `+${controller}`).join(" "),
      `enable the ${names} controller(s) for the cgroups under ${directory}`,
    );
  } catch (error) {
    const code = errorCode((error as Error).cause);
    if (code === "EBUSY") {
      throw new CgroupError(
        `Could not enable the ${names} controller(s) in ${file}: processes live in ${directory} itself, and cgroup v2 allows processes only in leaf cgroups once controllers are enabled for the children. Move them into a leaf first: mkdir ${directory}/init, then write each pid of ${directory}/cgroup.procs into ${directory}/init/cgroup.procs.`,
        { path: file, cause: error },
      );
    }
    if (code === "ENOENT" || code === "EINVAL") {
      const available = (await readOptional(join(directory, "cgroup.controllers")))?.trim();
      throw new CgroupError(
        `Could not enable the ${names} controller(s) in ${file}: ${directory}/cgroup.controllers offers only "${available ?? ""}". Enable them in the parent's cgroup.subtree_control (with systemd: Delegate=yes).`,
        { path: file, cause: error },
      );
    }
    throw error;
  }
}

/**
 * A cgroup v2 sandbox or exec: limits and usage on its directory, its processes in the `main`
 * leaf, its children beside that leaf.
 */
class CgroupV2 implements SandboxCgroup {
  readonly description: string;
  readonly procsFiles: readonly string[];
  readonly #directory: string;
  readonly #options: CgroupV2Options;

  constructor(directory: string, options: CgroupV2Options) {
    this.#directory = directory;
    this.#options = options;
    this.description = directory;
    this.procsFiles = [join(directory, leafName, "cgroup.procs")];
  }

  async setLimits(limits: ResourceLimits): Promise<void> {
    const { memoryBytes, cpuQuotaMicroseconds, pids } = kernelLimits(limits);
    const directory = this.#directory;
    await writeText(join(directory, "memory.max"), String(memoryBytes), "set the memory limit");
    const swap = join(directory, "memory.swap.max");
    // Absent when the kernel does not account swap: then no swap can dodge memory.max.
    if (await exists(swap)) await writeText(swap, "0", "forbid swap");
    await writeText(
      join(directory, "cpu.max"),
      `${cpuQuotaMicroseconds} ${cpuPeriodMicroseconds}`,
      "set the CPU quota",
    );
    await writeText(join(directory, "pids.max"), String(pids), "set the process limit");
  }

  async usage(): Promise<CgroupUsage> {
    const directory = this.#directory;
    const [cpuMicroseconds, peak, memoryCurrentBytes, pids, oomKills] = await Promise.all([
      readKeyedNumber(join(directory, "cpu.stat"), "usage_usec"),
      readOptional(join(directory, "memory.peak")),
      readNumber(join(directory, "memory.current")),
      readNumber(join(directory, "pids.current")),
      readKeyedNumber(join(directory, "memory.events"), "oom_kill"),
    ]);
    return {
      cpuSeconds: cpuMicroseconds / 1e6,
      // memory.peak came in Linux 5.19; before, the current use is the best there is.
      memoryPeakBytes: peak === undefined ? memoryCurrentBytes : Number(peak.trim()),
      memoryCurrentBytes,
      pids,
      oomKills,
    };
  }

  async child(name: string): Promise<SandboxCgroup> {
    checkCgroupName(name, "child");
    // Allowed at any time: this cgroup's own processes are in its leaf, not in it.
    await enableControllers(this.#directory, this.#options.controllers ?? v2Controllers);
    const directory = join(this.#directory, name);
    await makeCgroup(directory);
    return new CgroupV2(directory, this.#options);
  }

  processes(): Promise<number[]> {
    return listProcesses([this.#directory]);
  }

  killAll(): Promise<void> {
    const directory = this.#directory;
    return killUntilEmpty({
      trees: [directory],
      description: directory,
      round: async () => {
        const killFile = join(directory, "cgroup.kill");
        // The kernel kills the whole subtree, frozen processes too, and stops forks while it
        // does: nothing for a dying runner to leave half done.
        const killed =
          this.#options.useKillFile !== false &&
          (await exists(killFile)) &&
          (await writeOptional(killFile, "1", "kill the processes"));
        if (!killed) {
          const pidsMax = join(directory, "pids.max");
          await killWithoutFreezing({
            trees: [directory],
            pidsMax: (await exists(pidsMax)) ? pidsMax : undefined,
            description: directory,
          });
        }
        await thawTree(directory, "cgroup.freeze", "0");
      },
    });
  }

  async destroy(): Promise<void> {
    await this.killAll();
    await removeCgroupTree(this.#directory);
  }
}

/** Makes a cgroup and its leaf, or neither. */
async function makeCgroup(directory: string): Promise<void> {
  await makeCgroupDirectory(directory);
  try {
    await makeCgroupDirectory(join(directory, leafName));
  } catch (error) {
    await removeCgroupTree(directory);
    throw error;
  }
}

/** Cgroup v2: sandboxes at `<mount>/cairn/<runner>/<name>`, the controllers enabled down to them. */
export class CgroupV2Driver implements CgroupDriver {
  readonly version = 2 as const;
  readonly root: string;
  readonly #options: CgroupV2Options;

  constructor(options: CgroupV2Options) {
    checkCgroupName(options.runnerName, "sandbox");
    this.#options = options;
    this.root = join(options.mount, "cairn", options.runnerName);
  }

  async #prepareRoot(): Promise<void> {
    const { mount, controllers = v2Controllers } = this.#options;
    await makeDirectoryTree(this.root);
    // Each level passes the controllers down to the next, so the sandboxes get them.
    for (const directory of [mount, join(mount, "cairn"), this.root]) {
      await enableControllers(directory, controllers);
    }
  }

  async create(name: string): Promise<SandboxCgroup> {
    checkCgroupName(name, "sandbox");
    // Every time: removeStale(), here or in another process, may have removed it.
    await this.#prepareRoot();
    const directory = join(this.root, name);
    await makeCgroup(directory);
    return new CgroupV2(directory, this.#options);
  }

  async removeAbandonedRunners(
    abandoned: (runnerName: string, tree: string) => Promise<boolean>,
  ): Promise<void> {
    const parent = dirname(this.root);
    for (const name of await abandonedSiblings([parent], basename(this.root), abandoned)) {
      // Their sandboxes outlived them: nothing else will ever stop these processes.
      await new CgroupV2(join(parent, name), this.#options).destroy();
    }
  }

  async removeStale(): Promise<void> {
    // The runner root as one cgroup: one kill covers every sandbox under it. The next create()
    // makes the root again.
    await new CgroupV2(this.root, this.#options).destroy();
  }
}
