import { basename, dirname, join } from "node:path";
import { CgroupError } from "./cgroup-error.js";
import {
  checkCgroupName,
  cpuPeriodMicroseconds,
  errorCode,
  exists,
  kernelLimits,
  keyedNumber,
  listChildren,
  makeCgroupDirectory,
  makeDirectoryTree,
  readNumber,
  readOptional,
  removeCgroupTree,
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

export const v1Controllers = ["memory", "cpu", "cpuacct", "pids", "freezer"] as const;
export type V1Controller = (typeof v1Controllers)[number];
/** A directory per controller; several may be one directory where controllers share a mount. */
export type V1Directories = Readonly<Record<V1Controller, string>>;

function mapDirectories(
  directories: V1Directories,
  change: (directory: string) => string,
): V1Directories {
  return {
    memory: change(directories.memory),
    cpu: change(directories.cpu),
    cpuacct: change(directories.cpuacct),
    pids: change(directories.pids),
    freezer: change(directories.freezer),
  };
}

function distinct(directories: V1Directories): string[] {
  return [...new Set(Object.values(directories))];
}

/** Makes the directory in every controller, or none of them. */
async function makeCgroup(directories: V1Directories): Promise<void> {
  const made: string[] = [];
  try {
    for (const directory of distinct(directories)) {
      await makeCgroupDirectory(directory);
      made.push(directory);
    }
  } catch (error) {
    for (const directory of made) await removeCgroupTree(directory);
    throw error;
  }
}

/** A cgroup v1 sandbox: the same relative path in each of the five controllers. */
class CgroupV1 implements SandboxCgroup {
  readonly description: string;
  readonly procsFiles: readonly string[];
  readonly #directories: V1Directories;

  constructor(directories: V1Directories) {
    this.#directories = directories;
    this.description = directories.memory;
    this.procsFiles = distinct(directories).map((directory) => join(directory, "cgroup.procs"));
  }

  async setLimits(limits: ResourceLimits): Promise<void> {
    const { memoryBytes, cpuQuotaMicroseconds, pids } = kernelLimits(limits);
    await this.#setMemoryLimit(memoryBytes);
    const cpu = this.#directories.cpu;
    await writeText(
      join(cpu, "cpu.cfs_period_us"),
      String(cpuPeriodMicroseconds),
      "set the CPU period",
    );
    await writeText(
      join(cpu, "cpu.cfs_quota_us"),
      String(cpuQuotaMicroseconds),
      "set the CPU quota",
    );
    await writeText(
      join(this.#directories.pids, "pids.max"),
      String(pids),
      "set the process limit",
    );
  }

  async #setMemoryLimit(bytes: number): Promise<void> {
    const memory = this.#directories.memory;
    const limitFile = join(memory, "memory.limit_in_bytes");
    const swapFile = join(memory, "memory.memsw.limit_in_bytes");
    const write = async (path: string) => {
      try {
        await writeText(path, String(bytes), "set the memory limit");
      } catch (error) {
        if (errorCode((error as Error).cause) !== "EBUSY") throw error;
        const used = await readNumber(join(memory, "memory.usage_in_bytes"));
        throw new CgroupError(
          `Could not lower the memory limit of ${memory} to ${megabytes(bytes)}: the sandbox uses more than the new limit (${megabytes(used)} now) and the kernel could not reclaim enough. Free memory in the sandbox or stop some of its processes, then retry.`,
          { path, cause: error },
        );
      }
    };
    // Only without swap accounting is there no memory+swap limit (then no swap can be used).
    if (!(await exists(swapFile))) return write(limitFile);
    // The kernel keeps memory+swap >= memory at every step, so the order depends on the way.
    const current = await readNumber(limitFile);
    if (bytes > current) {
      await write(swapFile);
      await write(limitFile);
    } else {
      await write(limitFile);
      await write(swapFile);
    }
  }

  async usage(): Promise<CgroupUsage> {
    const { memory, cpuacct, pids } = this.#directories;
    const [cpuNanoseconds, memoryPeakBytes, memoryCurrentBytes, processes, oomKills] =
      await Promise.all([
        readNumber(join(cpuacct, "cpuacct.usage")),
        readNumber(join(memory, "memory.max_usage_in_bytes")),
        readNumber(join(memory, "memory.usage_in_bytes")),
        readNumber(join(pids, "pids.current")),
        countOomKills(memory),
      ]);
    return {
      cpuSeconds: cpuNanoseconds / 1e9,
      memoryPeakBytes,
      memoryCurrentBytes,
      pids: processes,
      oomKills,
    };
  }

  async child(name: string): Promise<SandboxCgroup> {
    checkCgroupName(name, "child");
    const directories = mapDirectories(this.#directories, (directory) => join(directory, name));
    await makeCgroup(directories);
    return new CgroupV1(directories);
  }

  processes(): Promise<number[]> {
    return listProcesses([this.#directories.pids]);
  }

  killAll(): Promise<void> {
    const trees = distinct(this.#directories);
    const freezer = this.#directories.freezer;
    return killUntilEmpty({
      trees,
      description: this.description,
      round: async () => {
        await killWithoutFreezing({
          trees,
          pidsMax: join(this.#directories.pids, "pids.max"),
          description: this.description,
        });
        // Processes an earlier run froze die of their SIGKILL once thawed.
        await thawTree(freezer, "freezer.state", "THAWED");
      },
    });
  }

  async destroy(): Promise<void> {
    await this.killAll();
    for (const directory of distinct(this.#directories)) await removeCgroupTree(directory);
  }
}

/** v1 counts an OOM kill only in the cgroup of the killed process, not in its ancestors. */
async function countOomKills(directory: string): Promise<number> {
  const control = await readOptional(join(directory, "memory.oom_control"));
  // Kernels before 4.13 do not count OOM kills.
  let total = control === undefined ? 0 : (keyedNumber(control, "oom_kill") ?? 0);
  for (const name of await listChildren(directory)) {
    total += await countOomKills(join(directory, name));
  }
  return total;
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 / 1024)} MB`;
}

/** Cgroup v1: one hierarchy per controller, each at `<mount>/cairn/<runner>`. */
export class CgroupV1Driver implements CgroupDriver {
  readonly version = 1 as const;
  readonly root: string;
  readonly #roots: V1Directories;

  /** `mounts`: where each controller's hierarchy is mounted, e.g. /sys/fs/cgroup/memory. */
  constructor(options: { readonly mounts: V1Directories; readonly runnerName: string }) {
    checkCgroupName(options.runnerName, "sandbox");
    this.#roots = mapDirectories(options.mounts, (mount) =>
      join(mount, "cairn", options.runnerName),
    );
    this.root = this.#roots.memory;
  }

  async create(name: string): Promise<SandboxCgroup> {
    checkCgroupName(name, "sandbox");
    // Every time: removeStale(), here or in another process, may have removed it.
    for (const root of distinct(this.#roots)) await makeDirectoryTree(root);
    const directories = mapDirectories(this.#roots, (root) => join(root, name));
    await makeCgroup(directories);
    return new CgroupV1(directories);
  }

  async removeAbandonedRunners(
    abandoned: (runnerName: string, tree: string) => Promise<boolean>,
  ): Promise<void> {
    const parents = distinct(this.#roots).map((root) => dirname(root));
    for (const name of await abandonedSiblings(parents, basename(this.root), abandoned)) {
      // Their sandboxes outlived them: nothing else will ever stop these processes.
      const directories = mapDirectories(this.#roots, (root) => join(dirname(root), name));
      await new CgroupV1(directories).destroy();
    }
  }

  async removeStale(): Promise<void> {
    // The runner root as one cgroup: one freeze and kill covers every sandbox under it. The next
    // create() makes the root again.
    await new CgroupV1(this.#roots).destroy();
  }
}
