import type { Readable, Writable } from "node:stream";
import type { ExecSignal } from "../../core/wire/exec-protocol.js";

/** What to run in a sandbox, as its user. */
export interface ProcessCommand {
  /** Inside the sandbox. */
  readonly cwd: string;
  readonly argv: readonly string[];
  /** The command's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** A terminal of this size, made inside the sandbox; else pipes. */
  readonly terminal?: { readonly cols: number; readonly rows: number } | undefined;
}

/** How a process ended: its exit code, or the signal that killed it. */
export interface ProcessExit {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A process started in a sandbox by its driver (driver.ts), its stdio piped to the runner. */
export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves once the command runs; rejects with a ProcessStartError when it cannot. */
  readonly started: Promise<void>;
  /** Settles when the command has ended (whatever still holds its pipes). */
  readonly exited: Promise<ProcessExit>;
  /** Settles once its stdout and stderr are closed: every byte of its output has been read. */
  readonly closed: Promise<void>;
}

/** CPU seconds and peak memory of one exec: its processes and what they started. */
export interface ProcessUsage {
  readonly cpuSeconds: number;
  readonly memoryPeakBytes: number;
}

/** A user's command in a sandbox (an exec), with its own signals, terminal and usage. */
export interface ExecProcess extends SandboxProcess {
  /** Resizes its terminal (terminal mode only). */
  resize(cols: number, rows: number): void;
  /**
   * Sends signals to the command and the processes it started (its session), at once; SIGKILL
   * also to those that left its session. Nothing once it has ended, or when it never started.
   */
  signal(names: readonly ExecSignal[]): Promise<void>;
  /** Kills every process of the exec, also those that left its session; settles once gone. */
  killAll(): Promise<void>;
  /** Its usage so far (read once it has ended); undefined where it is not measured. */
  usage(): Promise<ProcessUsage | undefined>;
}
