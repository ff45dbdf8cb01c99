import { SandboxError } from "./sandbox-error.js";

const marker = Symbol.for("cairn.error.sandbox-capacity");

/**
 * The runner cannot promise a new sandbox the memory, CPU or disk it asks for (the message
 * names which): what it has admitted already takes the host's capacity. The HTTP API answers
 * 503 with `Retry-After`; a smaller sandbox, or one created after others stop, may fit.
 */
export class SandboxCapacityError extends SandboxError {
  readonly [marker] = true;
  /** Seconds after which a retry may find room. */
  readonly retryAfter: number;

  constructor(message: string, options: { retryAfter?: number | undefined } = {}) {
    super("capacity_exceeded", message);
    this.name = "SandboxCapacityError";
    this.retryAfter = options.retryAfter ?? 10;
  }

  static override isInstance(error: unknown): error is SandboxCapacityError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
