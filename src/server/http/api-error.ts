import {
  CairnError,
  SandboxNotFoundError,
  SandboxUnavailableError,
} from "../../core/errors/index.js";

/**
 * The closed list of error codes the API answers with, and their statuses: the one table of
 * this boundary. Documented in the README and in the OpenAPI document; every error body is
 * `{ error: code, message }`, and a sandbox error adds `sandbox_id` (and `reason`). Shared code
 * (the runner, validation, decoding) throws `core/errors` classes, whose codes are listed here.
 */
export const errorStatuses = {
  invalid_request: 400,
  unauthorized: 401,
  /** A valid sandbox token or signed URL used for something it does not grant. */
  forbidden: 403,
  /** A request on a dashboard session from another origin, or without the session's token. */
  csrf_failed: 403,
  not_found: 404,
  sandbox_not_found: 404,
  exec_not_found: 404,
  request_timeout: 408,
  conflict: 409,
  /** A managed agent that is not `ready` (starting, crashed, stopped, restarting). */
  agent_not_ready: 409,
  /** 503 when the reason is `runner_unavailable`: no one sandbox is at fault. */
  sandbox_unavailable: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  limit_exceeded: 429,
  internal_error: 500,
  sandbox_start_failed: 500,
  bad_gateway: 502,
  unavailable: 503,
  capacity_exceeded: 503,
} as const;

export type ErrorCode = keyof typeof errorStatuses;

const marker = Symbol.for("cairn.error.api");

/** An error the API reports to the client as it is, with its status. */
export class ApiError extends CairnError {
  readonly [marker] = true;
  readonly status: number;
  /** Seconds, for 429 and 503. */
  readonly retryAfter: number | undefined;
  /** Fields the body carries besides `error` and `message`. */
  readonly details: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      retryAfter?: number | undefined;
      status?: number;
      details?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.name = "ApiError";
    this.status = options.status ?? errorStatuses[code];
    this.retryAfter = options.retryAfter;
    this.details = options.details ?? {};
  }

  static override isInstance(error: unknown): error is ApiError {
    return typeof error === "object" && error !== null && marker in error;
  }
}

/** A CairnError raised by shared code (the runner, validation, decoding) as the API error it means. */
export function toApiError(error: unknown): ApiError | undefined {
  if (ApiError.isInstance(error)) return error;
  if (!CairnError.isInstance(error) || !(error.code in errorStatuses)) return undefined;
  const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
  const options = {
    retryAfter: typeof retryAfter === "number" ? retryAfter : undefined,
    cause: error,
  };
  if (SandboxUnavailableError.isInstance(error)) {
    return new ApiError("sandbox_unavailable", error.message, {
      ...options,
      status: error.reason === "runner_unavailable" ? 503 : 409,
      details: {
        reason: error.reason,
        ...(error.sandboxId === undefined ? {} : { sandbox_id: error.sandboxId }),
        ...(error.detail === undefined ? {} : { detail: error.detail }),
      },
    });
  }
  if (SandboxNotFoundError.isInstance(error)) {
    return new ApiError("sandbox_not_found", error.message, {
      ...options,
      details: { sandbox_id: error.sandboxId },
    });
  }
  return new ApiError(error.code as ErrorCode, error.message, options);
}
