import { CairnError } from "./cairn-error.js";

const marker = Symbol.for("cairn.error.api-request");

/** The Cairn service answered a client call with an error. */
export class ApiRequestError extends CairnError {
  readonly [marker] = true;
  /** The HTTP status (0 when the service could not be reached). */
  readonly status: number;

  constructor(code: string, message: string, status: number, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "ApiRequestError";
    this.status = status;
  }

  static override isInstance(error: unknown): error is ApiRequestError {
    return typeof error === "object" && error !== null && marker in error;
  }
}
