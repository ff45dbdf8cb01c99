import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { CapacityOptions } from "./admission.js";
import type { SandboxDriver } from "./driver.js";
import type { RunnerLimits } from "./live-sandbox.js";
import type { KeptWorkspace, SandboxMount } from "./sandbox-spec.js";
import type { RunnerTemplate } from "./templates.js";

/** Where the runner keeps sandboxes (the store's SandboxStore satisfies it). */
export interface SandboxRecords {
  insert(projectId: string, record: SandboxRecord): void;
  update(record: SandboxRecord): void;
  get(projectId: string, id: string): SandboxRecord | undefined;
  openSegment(projectId: string, record: SandboxRecord, startMs: number): void;
  closeSegment(sandboxId: string, endMs: number, cpuSeconds: number): void;
  /** Writes the CPU seconds of the open segment so far, without closing it. */
  updateOpenSegment(sandboxId: string, cpuSeconds: number): void;
  markAbandoned(reason: string, now: Date): number;
}

export interface RunnerSettings {
  /** What starts, enters and stops the sandboxes (driver.ts): bubblewrap on this host. */
  readonly driver: SandboxDriver;
  readonly records: SandboxRecords;
  readonly templates: ReadonlyMap<string, RunnerTemplate>;
  /** Start sandboxes whose limits the driver cannot enforce (and say so in their status). */
  readonly allowUnenforcedLimits?: boolean;
  /** Caps on sandboxes, execs, sockets and output memory; each defaults as documented. */
  readonly limits?: Partial<RunnerLimits>;
  /** What the runner may promise its sandboxes together (admission.ts). */
  readonly capacity?: CapacityOptions;
  /** How often open usage is written down, in ms. Default 60000. */
  readonly checkpointMs?: number;
  /**
   * Variables every exec of a sandbox gets, under the exec's own: its secrets' placeholders
   * (egress/policy.ts, `secretEnvironment`) and its egress proxy. Asked at each exec, which
   * waits for it (the secret stores may be in a database).
   */
  readonly environmentFor?: (
    sandboxId: string,
  ) => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
}

export interface CreateOptions {
  readonly template: string;
  readonly timeout: number;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly diskMB: number;
  readonly tags: Record<string, string>;
  /** The secret store of its egress proxy; none: no egress. */
  readonly secretStore?: string | undefined;
  /**
   * Host files or folders bound read-only into the sandbox, each at or under `/opt/cairn`
   * (the agent core). Internal: `POST /api/sandboxes` cannot set it. A sandbox with mounts is
   * always started fresh, never taken from the warm ones.
   */
  readonly mounts?: readonly SandboxMount[] | undefined;
  /**
   * A /workspace that outlives the sandbox (its stop, and a restart of the service), kept at a
   * host path the service owns. Internal, like `mounts`. At most one live sandbox per path.
   */
  readonly workspace?: KeptWorkspace | undefined;
}

/** What an internal caller (the agents service) may ask of an exec beyond its request. */
export interface ExecOptions {
  /**
   * Each line of stdout and stderr as it comes, decoded as UTF-8, without its `\n` (or `\r\n`);
   * a last line without one when the exec ends. Lossless: read from the process's pipes, not
   * from the re-attach buffer (which drops the oldest output). A line is cut at
   * `maxLineBytes` (the rest of it, up to its `\n`, is dropped).
   */
  readonly onLine?: ((stream: "stdout" | "stderr", line: string) => void) | undefined;
  /** Default 16 MiB. */
  readonly maxLineBytes?: number | undefined;
  /**
   * The service's own process (the agent core): not listed by `GET …/exec`, not attachable
   * through the API (no WebSocket can write to its stdin), and not counted in a user's view.
   */
  readonly internal?: boolean | undefined;
}
