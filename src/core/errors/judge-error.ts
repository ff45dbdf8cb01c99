import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.judge");

export interface JudgeErrorOptions {
  /** HTTP status of the judge's last answer; undefined when it could not be reached. */
  status?: number | undefined;
  /** Whether asking again later may succeed (network errors, timeouts, 429, 5xx). */
  retryable: boolean;
  cause?: unknown;
}

/**
 * The LLM judge could not grade: it could not be reached, refused the request (bad key, no
 * credit, unknown model), or kept failing after the retries. Malformed verdicts are not errors:
 * they resolve with `score: null`.
 */
export class JudgeError extends CairnError {
  readonly [marker] = true;
  readonly status: number | undefined;
  readonly retryable: boolean;

  constructor(message: string, options: JudgeErrorOptions) {
    super("judge_failed", message, { cause: options.cause });
    this.name = "JudgeError";
    this.status = options.status;
    this.retryable = options.retryable;
  }

  static override isInstance(error: unknown): error is JudgeError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
