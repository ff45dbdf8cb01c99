import { SandboxError } from "./sandbox-error.js";

const marker = Symbol.for("cairn.error.sandbox-limit");

/**
 * A configured cap is reached: the project or the runner holds as many sandboxes as it may, a
 * sandbox as many execs, or an exec as many sockets; the message names the cap. The HTTP API
 * answers 429 with `Retry-After`; the work succeeds again once something ends.
 */
export class SandboxLimitError extends SandboxError {
  readonly [marker] = true;
  /** Seconds after which a retry may find room. */
  readonly retryAfter: number;

  constructor(message: string, options: { retryAfter?: number | undefined } = {}) {
    super("limit_exceeded", message);
    this.name = "SandboxLimitError";
    this.retryAfter = options.retryAfter ?? 5;
  }

  static override isInstance(error: unknown): error is SandboxLimitError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
