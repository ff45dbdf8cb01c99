import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { ExecSession } from "./exec/exec-session.js";
import type { Booted } from "./sandbox-launcher.js";

/** A sandbox whose processes the runner holds: what it needs to run, watch and stop it. */
export interface LiveSandbox extends Booted {
  record: SandboxRecord;
  readonly projectId: string;
  readonly execs: Map<string, ExecSession>;
  /** CPU seconds of the cgroup when the open usage segment began. */
  cpuAtSegmentStart: number;
  expiryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Settles once the sandbox has reached a final status. */
  stopping: Promise<SandboxRecord> | undefined;
}

/**
 * Finished execs kept per sandbox for `GET …/exec` and re-attach (the oldest go first): each
 * holds up to its output buffer in the runner's memory.
 */
export const finishedExecsKept = 20;

/** Execs a sandbox may hold at once, running and kept. */
export const maxExecsPerSandbox = 64;
