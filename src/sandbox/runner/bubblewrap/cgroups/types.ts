/** What a sandbox may use. */
export interface ResourceLimits {
  readonly memoryMB: number;
  /** CPUs of quota: 1 = one core's worth of time per period. */
  readonly cpuCount: number;
  /** Most processes and threads at once, against fork bombs. */
  readonly pids: number;
}

/** What a cgroup has used. */
export interface CgroupUsage {
  /** CPU time of every process that ran in it (and its children), in seconds. */
  readonly cpuSeconds: number;
  /** The highest memory use seen, in bytes. */
  readonly memoryPeakBytes: number;
  readonly memoryCurrentBytes: number;
  /** Processes and threads in it now. */
  readonly pids: number;
  /** Times the memory limit killed a process (OOM kills). */
  readonly oomKills: number;
}

/** One sandbox's cgroup (in every controller it uses, for v1). */
export interface SandboxCgroup {
  /** For messages: e.g. `/sys/fs/cgroup/cairn/<runner>/<name>` or the v1 memory path. */
  readonly description: string;
  /**
   * The files a process writes its own pid to (as root) to join this cgroup: one on v2, one
   * per controller on v1. The launch wrapper writes them before exec'ing bwrap, and the exec
   * helper before it enters the sandbox, so a process is inside from its first instruction.
   */
  readonly procsFiles: readonly string[];
  /** Sets or changes the limits, live. */
  setLimits(limits: ResourceLimits): Promise<void>;
  usage(): Promise<CgroupUsage>;
  /** A cgroup inside this one (limits are inherited): one per exec, for its own usage. */
  child(name: string): Promise<SandboxCgroup>;
  /**
   * SIGKILLs every process in it and in its children, with forks stopped first (pids.max = 0,
   * or cgroup.kill) and nothing ever frozen, and resolves once they are all gone (within about
   * a second).
   */
  killAll(): Promise<void>;
  /** Host pids of the processes in it and in its children. */
  processes(): Promise<number[]>;
  /** killAll(), then removes it and its children. Safe to call twice. */
  destroy(): Promise<void>;
}

/** Makes the cgroups of one runner, under one parent cgroup of its own. */
export interface CgroupDriver {
  readonly version: 1 | 2;
  /** Where this runner's cgroups live (v2 path, or the v1 memory controller's path). */
  readonly root: string;
  create(name: string): Promise<SandboxCgroup>;
  /** Kills and removes what a previous run of the runner left (after a crash or kill -9). */
  removeStale(): Promise<void>;
  /**
   * Kills the processes in, and removes, the cgroups of other runners (beside this one's) that
   * `abandoned` says are gone: what runners killed with -9 left, whose data directories never
   * start again (their sandboxes outlive them, holding workspaces and loop devices).
   */
  removeAbandonedRunners(
    abandoned: (runnerName: string, tree: string) => Promise<boolean>,
  ): Promise<void>;
}
