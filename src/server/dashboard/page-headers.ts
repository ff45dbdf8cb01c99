import type { Context } from "hono";

// Only a plain host (name or address, and port) goes into the policy: anything else in the Host
// header would be a way to write directives into it.
const plainHost = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/**
 * The headers of every answer under /ui: a strict Content-Security-Policy (scripts and styles
 * from this origin only, no framing, no <base>, forms back here; WebSockets to this host),
 * no MIME sniffing, no Referer (a sign-in link's code must not leak).
 */
export function setPageHeaders(c: Context): void {
  const host = c.req.header("host");
  const sockets = host !== undefined && plainHost.test(host) ? ` ws://${host} wss://${host}` : "";
  c.header(
    "content-security-policy",
    [
      "default-src 'self'",
      `connect-src 'self'${sockets}`,
      "img-src 'self' data: blob:",
      "style-src 'self' 'unsafe-inline'",
      "script-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join("; "),
  );
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "no-referrer");
}
