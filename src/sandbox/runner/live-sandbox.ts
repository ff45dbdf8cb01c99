import { SandboxUnavailableError } from "../../core/errors/index.js";
import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { EgressGrants, SandboxDriver } from "./driver.js";
import type { ExecSession } from "./exec/exec-session.js";

/** A sandbox the runner runs: what it needs to run, watch and stop it. */
export interface LiveSandbox {
  record: SandboxRecord;
  readonly projectId: string;
  /** What runs it: execs and file operations go through its driver, by the sandbox's id. */
  readonly driver: SandboxDriver;
  readonly execs: Map<string, ExecSession>;
  /** Execs admitted and still starting (not yet in `execs`). */
  startingExecs: number;
  /** File operations running inside it now, and the most it may run at once. */
  readonly fileOperations: { running: number; readonly cap: number };
  /** Its CPU seconds (as its driver counts them) when the open usage segment began. */
  cpuAtSegmentStart: number;
  expiryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Settles once the sandbox has reached a final status. */
  stopping: Promise<SandboxRecord> | undefined;
  /** Aborted as it begins stopping: an exec still on its way in is not started. */
  readonly stopRequested: AbortController;
  /** Extra hosts for its egress; undefined when it has none. */
  readonly egress: EgressGrants | undefined;
}

/** The refusal of work on a sandbox that is not running (or no longer will be). */
export function notRunningError(id: string, status: string): SandboxUnavailableError {
  const reason = status === "expired" || status === "failed" ? status : "stopped";
  return new SandboxUnavailableError({ reason, sandboxId: id });
}

/** Refuses work on a sandbox that began stopping while a request waited. */
export function checkStillRunning(sandbox: LiveSandbox): void {
  if (sandbox.stopping !== undefined) throw notRunningError(sandbox.record.id, "stopping");
}

/**
 * Finished execs kept per sandbox for `GET …/exec` and re-attach (the oldest go first): each
 * holds up to its output buffer in the runner's memory.
 */
export const finishedExecsKept = 20;

/** What one runner, one project and one sandbox may hold at once. */
export interface RunnerLimits {
  /** Sandboxes running (or starting) in one project. Default 100. */
  readonly sandboxesPerProject: number;
  /** Sandboxes running (or starting) in the runner. Default 200. */
  readonly sandboxes: number;
  /** Execs running in a sandbox at once. Default 64. */
  readonly execsPerSandbox: number;
  /** WebSockets following one exec at once. Default 8. */
  readonly socketsPerExec: number;
  /** WebSockets following the runner's execs, all together. Default 1024. */
  readonly sockets: number;
  /** File operations (each a process in the sandbox) running in a sandbox at once. Default 16. */
  readonly fileOperationsPerSandbox: number;
  /** Output kept per exec for re-attach, in bytes. Default 4 MiB. */
  readonly outputBufferBytes: number;
  /** Memory all the execs' output buffers may take together, in bytes. Default 256 MiB. */
  readonly outputBudgetBytes: number;
}

export const defaultRunnerLimits: RunnerLimits = {
  sandboxesPerProject: 100,
  sandboxes: 200,
  execsPerSandbox: 64,
  socketsPerExec: 8,
  sockets: 1024,
  fileOperationsPerSandbox: 16,
  outputBufferBytes: 4 * 1024 * 1024,
  outputBudgetBytes: 256 * 1024 * 1024,
};
