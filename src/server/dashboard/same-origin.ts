import type { Context } from "hono";
import { ApiError } from "../http/api-error.js";
import { ownOrigin } from "../http/own-origin.js";
import { sameSecret } from "./secrets.js";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether the request came over https (the session cookie is then Secure). */
export function isHttps(c: Context): boolean {
  return ownOrigin(c)?.startsWith("https:") ?? false;
}

/**
 * Throws 403 `csrf_failed` unless the request's Origin (or, without one, its Referer) is this
 * service's own origin. `required`: a request with neither is refused too; otherwise it passes
 * (a command-line client sends neither, and has no cookie a page could ride on).
 */
export function requireSameOrigin(c: Context, required: boolean): void {
  const origin = c.req.header("origin");
  const referer = c.req.header("referer");
  const own = ownOrigin(c);
  if (origin === undefined && referer === undefined) {
    if (!required) return;
    throw new ApiError(
      "csrf_failed",
      "the request has neither an Origin nor a Referer header, so it cannot be told from a cross-site request; a dashboard session's requests must come from the dashboard's own pages",
    );
  }
  const [header, claimed] =
    origin === undefined ? ["Referer", originOf(referer)] : ["Origin", originOf(origin)];
  if (claimed === undefined || own === undefined || claimed !== own) {
    throw new ApiError(
      "csrf_failed",
      `the request's ${header} (${claimed ?? "not an origin"}) is not this service's origin (${own ?? "no Host header"}); a dashboard session's requests must come from the dashboard's own pages`,
    );
  }
}

/**
 * The checks a request authenticated by a dashboard session passes: a WebSocket upgrade comes
 * from this origin (no cross-site WebSocket hijacking); any request that may change something
 * (not GET, HEAD or OPTIONS) also carries the session's token in X-CSRF-Token.
 */
export function requireSessionRequest(c: Context, csrfToken: string): void {
  const upgrade = c.req.header("upgrade")?.toLowerCase() === "websocket";
  const changes = !safeMethods.has(c.req.method.toUpperCase());
  if (!upgrade && !changes) return;
  requireSameOrigin(c, true);
  if (!changes) return;
  const given = c.req.header("x-csrf-token");
  if (given === undefined || given === "") {
    throw new ApiError(
      "csrf_failed",
      `the X-CSRF-Token header is missing: a dashboard session's ${c.req.method} requests carry the csrfToken of GET /auth/session`,
    );
  }
  if (!sameSecret(given, csrfToken)) {
    throw new ApiError(
      "csrf_failed",
      "the X-CSRF-Token header is not this session's token: read it again from GET /auth/session",
    );
  }
}

function originOf(value: string | undefined): string | undefined {
  if (value === undefined || value === "null") return undefined;
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}
