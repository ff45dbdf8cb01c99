import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";

/**
 * Throws 403 unless the request comes from `origin` (a browser token bound to a page's origin);
 * nothing to check when the token has none. A request without an Origin header is refused too.
 */
export function requireTokenOrigin(
  c: Context,
  origin: string | null,
  token = "sandbox token",
): void {
  if (origin === null) return;
  const from = c.req.header("origin");
  if (from !== origin) {
    throw new ApiError(
      "forbidden",
      `this ${token} is bound to the origin ${origin}; the request came from ${from === undefined ? "no origin" : JSON.stringify(from)}`,
    );
  }
}
