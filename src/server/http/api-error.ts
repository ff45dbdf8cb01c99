import { CairnError } from "../../core/errors/index.js";

/**
 * The closed list of error statuses the API answers with, and their codes. Documented in the
 * README and in the OpenAPI document; every error body is `{ error: code, message }`.
 */
export const errorStatuses = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  limit_exceeded: 429,
  internal_error: 500,
  bad_gateway: 502,
  unavailable: 503,
  capacity_exceeded: 503,
} as const;

export type ErrorCode = keyof typeof errorStatuses;

const marker = Symbol.for("cairn.error.api");

/** An error the API reports to the client as it is, with its status. */
export class ApiError extends CairnError {
  readonly [marker] = true;
  readonly status: (typeof errorStatuses)[ErrorCode];
  /** Seconds, for 429 and 503. */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: { retryAfter?: number } = {}) {
    super(code, message);
    this.name = "ApiError";
    this.status = errorStatuses[code];
    this.retryAfter = options.retryAfter;
  }

  static override isInstance(error: unknown): error is ApiError {
    return typeof error === "object" && error !== null && marker in error;
  }
}

/** A CairnError raised by shared code (validation, decoding) as the API error it means. */
export function toApiError(error: unknown): ApiError | undefined {
  if (ApiError.isInstance(error)) return error;
  if (CairnError.isInstance(error) && error.code in errorStatuses) {
    const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
    return new ApiError(
      error.code as ErrorCode,
      error.message,
      typeof retryAfter === "number" ? { retryAfter } : {},
    );
  }
  return undefined;
}
