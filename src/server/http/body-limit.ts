import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "./api-error.js";

/**
 * Refuses bodies over `maxBytes` with 413. A declared Content-Length is checked directly (Node's
 * HTTP parser never reads past it), which keeps the adapter's fast path for reading the body;
 * only a chunked body, of unknown length, is counted as it streams in.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const tooLarge = () => {
    throw new ApiError(
      "payload_too_large",
      `the request body is over ${maxBytes} bytes; send smaller batches`,
    );
  };
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    const declared = c.req.header("content-length");
    if (declared === undefined) return streamed(c, next);
    if (Number(declared) > maxBytes) tooLarge();
    await next();
  };
}
