import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { ExecProcess, ProcessCommand, SandboxProcess } from "./sandbox-process.js";
import type { KeptWorkspace, SandboxMount, SandboxSizes, SandboxSpec } from "./sandbox-spec.js";

/**
 * Where sandboxes run, and how: what starts, enters, resizes, measures and stops them. The
 * runner (runner.ts) keeps the rest for every driver: records, admission against capacity,
 * lifetimes, tags, exec sessions (output buffers, re-attach, lines), the confinement of file
 * paths, usage segments and prices, tokens. It names a sandbox to its driver by id.
 *
 * The first driver is bubblewrap on the service's own host (bubblewrap/bubblewrap-driver.ts).
 * Each member's last line says what a Kubernetes driver would do (docs/scaling.md).
 */
export interface SandboxDriver {
  /**
   * The limits its sandboxes are not held to (empty: all are). The runner refuses sandboxes
   * unless told to run them anyway, and says so in each one's record.
   * Kubernetes: none (a pod's limits and its ephemeral storage hold them all).
   */
  readonly unenforcedLimits: readonly UnenforcedLimit[];

  /**
   * Takes the place sandboxes run in for this runner, once, before anything else: removes what
   * an earlier run left there, and rejects, touching nothing more, when it cannot.
   * Kubernetes: deletes the pods labelled with this runner's name that outlived it.
   */
  open(): Promise<void>;

  /**
   * Begins what makes later creations fast (workspaces made ahead; with `warm`, sandboxes
   * started ahead), in the background; settles once that is under way. Every create waits for
   * it, and fails with it.
   * Kubernetes: nothing, or a few pods started ahead.
   */
  start(options: { readonly warm: boolean }): Promise<void>;

  /**
   * Disk left for new workspaces, in bytes, now: what admission promises from.
   * Kubernetes: the node's allocatable ephemeral storage less what its pods request.
   */
  freeDiskBytes(): Promise<number>;

  /**
   * Checks a sandbox's mounts before anything is reserved for it, and returns them resolved;
   * throws a CairnError `invalid_request` naming a bad one.
   * Kubernetes: read-only volumes at the same paths (the image's, or a ConfigMap's).
   */
  checkMounts(mounts: readonly SandboxMount[]): Promise<SandboxMount[]>;

  /**
   * The one name of a kept workspace however it is spelled (one live sandbox holds each at a
   * time); throws a CairnError `invalid_request` for one it cannot keep.
   * Kubernetes: a PersistentVolumeClaim named after it.
   */
  keptWorkspaceKey(workspace: KeptWorkspace): string;

  /**
   * Starts a sandbox: isolated, held to its sizes, with its /workspace (new, or the kept one)
   * and its egress; undoes what it did when a step fails.
   * Kubernetes: a Pod with a runtimeClassName (gVisor, Kata), limits = requests, a workspace volume.
   */
  create(spec: SandboxSpec): Promise<StartedSandbox>;

  /**
   * Starts a user's command in a running sandbox, as its user, with usage of its own; rejects
   * with `signal`'s reason when that is aborted (the sandbox began stopping) before it starts.
   * Kubernetes: pods/exec (WebSocket, v5.channel.k8s.io) of the image's exec wrapper.
   */
  exec(
    sandboxId: string,
    command: ProcessCommand,
    options?: { readonly signal?: AbortSignal | undefined },
  ): Promise<ExecProcess>;

  /**
   * Runs a file tool in a running sandbox (files.ts: realpath, find, cat, dd, mv, mkdir, rm),
   * as its user; one whose sandbox has stopped never starts (`started` rejects).
   * Kubernetes: pods/exec of the same tool (a whole tree as a tar stream, as kubectl cp).
   */
  fileTool(sandboxId: string, command: ProcessCommand): SandboxProcess;

  /**
   * Changes a running sandbox's CPUs and memory, live; rejects when it cannot (its processes
   * use more memory than the new size).
   * Kubernetes: the pods/resize subresource (in-place pod resize).
   */
  resize(sandboxId: string, sizes: SandboxSizes): Promise<void>;

  /**
   * Its CPU and memory counters now; undefined where they are not measured, or once it stopped.
   * Kubernetes: pod_cpu_usage_seconds_total and pod_memory_working_set_bytes (/metrics/resource).
   */
  usage(sandboxId: string): Promise<SandboxUsage | undefined>;

  /**
   * Bytes its workspace holds now; undefined where disk sizes are not held.
   * Kubernetes: the workspace volume's usedBytes in the kubelet's stats summary.
   */
  diskUsage(sandboxId: string): Promise<number | undefined>;

  /**
   * Where the service can watch its workspace's files on its own host (the event stream's
   * file events); undefined where it cannot.
   * Kubernetes: undefined (a watcher would be one long exec in the pod).
   */
  workspaceHostPath(sandboxId: string): string | undefined;

  /**
   * Kills every process of a sandbox and frees what it held (its workspace, unless kept; its
   * egress). Never rejects: what goes wrong is logged.
   * Kubernetes: deletes the Pod with a grace period of 0.
   */
  stop(sandboxId: string): Promise<void>;

  /**
   * Frees what the driver holds itself (sandboxes and workspaces made ahead) and, once every
   * sandbox it started is stopped (the runner stops them meanwhile), what is left of it.
   * Kubernetes: deletes the pods started ahead.
   */
  close(): Promise<void>;
}

/** A limit a driver may not be able to hold sandboxes to. */
export type UnenforcedLimit = SandboxRecord["unenforcedLimits"][number];

/** A sandbox its driver has started. */
export interface StartedSandbox {
  /** Settles when its processes have ended, whatever ended them: how, in words. */
  readonly ended: Promise<SandboxEnd>;
  /** Hosts it may reach for a while beyond its policy; undefined: it has no egress. */
  readonly egress: EgressGrants | undefined;
}

/** How a sandbox's processes ended, for the failure of one that ended on its own. */
export interface SandboxEnd {
  /** Short: `code 1`, `SIGKILL`, `OOMKilled`. */
  readonly how: string;
  /** What the sandbox's start said on the way (its last lines of errors); may be empty. */
  readonly detail: string;
}

/** Extra hosts for one sandbox's egress (SandboxRunner.allowEgress). */
export interface EgressGrants {
  /** Allows `hostPatterns` (checked, formatted) until the returned function is called. */
  allow(hostPatterns: readonly string[]): () => void;
}

/** A sandbox's counters, as a driver reads them. */
export interface SandboxUsage {
  /** CPU time of every process it ran, in seconds: it only grows. */
  readonly cpuSeconds: number;
  readonly memoryCurrentBytes: number;
  /** The highest memory use seen. */
  readonly memoryPeakBytes: number;
}
