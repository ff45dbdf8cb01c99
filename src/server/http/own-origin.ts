import type { Context } from "hono";

/**
 * This service's origin as the request addressed it: the scheme (https when the connection is
 * TLS, or a proxy in front says so with X-Forwarded-Proto) and the Host header. A page may set
 * neither across sites: its browser sets Host, and X-Forwarded-Proto is no header a page can
 * send elsewhere without a preflight this service refuses.
 */
export function ownOrigin(c: Context): string | undefined {
  const host = c.req.header("host");
  if (host === undefined) return undefined;
  const forwarded = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const scheme =
    forwarded === "https" || forwarded === "http" ? forwarded : new URL(c.req.url).protocol;
  try {
    return new URL(`${scheme.replace(/:$/, "")}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * The origin the service's links start with: its own as the request addressed it
 * ({@link ownOrigin}), else the request URL's.
 */
export function linkOrigin(c: Context): string {
  return ownOrigin(c) ?? new URL(c.req.url).origin;
}
