import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { log } from "../../core/logger.js";
import { ApiError, toApiError } from "./api-error.js";
import { databaseOutage } from "./database-outage.js";

/** Every error as `{ error, message }` with its status; never a stack trace to the client. */
export function errorResponse(error: unknown, c: Context): Response {
  const known = toApiError(error) ?? fromHttpException(error) ?? databaseOutage(rootCause(error));
  if (known === undefined || known.status === 500) {
    // What failed on the host stays in the log: the client gets the code and a message that
    // says so, never the host's own text.
    log.error(
      `request ${c.get("requestId") ?? ""} failed${known === undefined ? "" : ` (${known.code})`}`,
      rootCause(error),
    );
  }
  const apiError =
    known ?? new ApiError("internal_error", "the server failed to answer; the error is logged");
  if (apiError.retryAfter !== undefined) c.header("retry-after", String(apiError.retryAfter));
  return c.json(
    { error: apiError.code, message: apiError.message, ...apiError.details },
    apiError.status as ContentfulStatusCode,
  );
}

export function notFoundResponse(c: Context): Response {
  return errorResponse(
    new ApiError("not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`),
    c,
  );
}

// Hono's own middleware (body limit, JSON parsing) reports with HTTPException.
function fromHttpException(error: unknown): ApiError | undefined {
  if (!(error instanceof HTTPException)) return undefined;
  if (error.status === 413) {
    return new ApiError("payload_too_large", error.message || "the request body is too large");
  }
  if (error.status === 400) {
    return new ApiError("invalid_request", error.message || "the request is malformed");
  }
  if (error.status === 401) return new ApiError("unauthorized", error.message);
  return undefined;
}

function rootCause(error: unknown): unknown {
  let cause = error;
  for (let depth = 0; depth < 8; depth++) {
    const next = (cause as { cause?: unknown } | undefined)?.cause;
    if (next === undefined || next === null) break;
    cause = next;
  }
  return cause;
}
