import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.export");

export interface ExportErrorOptions {
  /** HTTP status of the collector's answer, when there was one. */
  status?: number;
  /** Whether sending the same spans again later may succeed (network errors, 429, 5xx). */
  retryable: boolean;
  /** How long the collector asked us to wait, from its `Retry-After` header. */
  retryAfterMs?: number;
  cause?: unknown;
}

/** Spans could not be delivered to the configured collector. */
export class ExportError extends CairnError {
  readonly [marker] = true;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: ExportErrorOptions) {
    super("export_failed", message, { cause: options.cause });
    this.name = "ExportError";
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }

  static override isInstance(error: unknown): error is ExportError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
