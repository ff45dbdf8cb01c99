import { SandboxError } from "./sandbox-error.js";

const marker = Symbol.for("cairn.error.exec-connection");

export interface ExecConnectionErrorOptions {
  /** Connection attempts made before giving up. */
  readonly attempts: number;
  /** The output offset the client had reached: reconnect with it to resume. */
  readonly offset: number;
  readonly cause?: unknown;
}

/**
 * The WebSocket of an exec could not be established, or re-established after it dropped,
 * within the retries. The process may still be running: the runner keeps it going without a
 * client.
 */
export class ExecConnectionError extends SandboxError {
  readonly [marker] = true;
  readonly attempts: number;
  readonly offset: number;

  constructor(message: string, options: ExecConnectionErrorOptions) {
    super(
      "exec_connection_failed",
      `${message} (gave up after ${options.attempts} attempts at output offset ${options.offset}). The process may still be running: check that the runner is reachable, then call connectExec again, or raise reconnect.attempts.`,
      { cause: options.cause },
    );
    this.name = "ExecConnectionError";
    this.attempts = options.attempts;
    this.offset = options.offset;
  }

  static override isInstance(error: unknown): error is ExecConnectionError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
