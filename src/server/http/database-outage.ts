import { log } from "../../core/logger.js";
import { DatabaseUnavailableError } from "../store/postgres/database-unavailable-error.js";
import { ApiError } from "./api-error.js";

/** Errors of the driver (postgres) and of Node's sockets that mean the database is out of reach. */
const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // PostgreSQL: shutting down, starting up or in recovery, no connection slot left.
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/** How often, at most, an outage is said in the log while requests keep meeting it. */
const logEveryMs = 60_000;
let lastLoggedAt = Number.NEGATIVE_INFINITY;

/**
 * The API's answer to a request that met a shared database out of reach (stopped, restarting,
 * out of connections, the network between): 503 `unavailable` with Retry-After, rather than a
 * 500, and a warning in the log at most once a minute, without a stack. Undefined for any other
 * error.
 */
export function databaseOutage(cause: unknown): ApiError | undefined {
  const { code, syscall } = (cause ?? {}) as { code?: unknown; syscall?: unknown };
  const outage =
    DatabaseUnavailableError.isInstance(cause) ||
    (typeof code === "string" &&
      (connectionCodes.has(code) ||
        code.startsWith("08") ||
        // A socket that could not connect: ENOENT for a Unix socket that is gone.
        (syscall === "connect" && code.startsWith("E"))));
  if (!outage) return undefined;
  const now = Date.now();
  if (now - lastLoggedAt >= logEveryMs) {
    lastLoggedAt = now;
    log.warn(
      `the database is out of reach (${code ?? "unavailable"}: ${(cause as Error).message}); requests that need it get 503 until it answers`,
    );
  }
  return new ApiError("unavailable", "the service's database is not answering; try again shortly", {
    retryAfter: 5,
    cause,
  });
}
