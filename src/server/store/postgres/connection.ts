import postgres from "postgres";
import { log } from "../../../core/logger.js";
import { DatabaseUnavailableError } from "./database-unavailable-error.js";
import { type DatabaseTarget, parseDatabaseUrl } from "./database-url.js";
import { checkServerVersion } from "./server-version.js";

/** A connected pool of PostgreSQL connections (porsager/postgres), as {@link openPostgres} gives it. */
export type PostgresSql = postgres.Sql;

export interface PostgresOptions {
  /** Most connections the pool opens at once (default 10). */
  readonly maxConnections?: number | undefined;
  /** Seconds an unused connection stays open before it is closed (default 60). */
  readonly idleTimeoutSeconds?: number | undefined;
  /** Seconds to wait for the server when connecting (default 10). */
  readonly connectTimeoutSeconds?: number | undefined;
  /** The name the server shows for these connections in pg_stat_activity (default cairn). */
  readonly applicationName?: string | undefined;
}

/**
 * How values cross between PostgreSQL and JavaScript, chosen so that rows read as the SQLite
 * store's do and the two share their conversion code (span-rows.ts, trace-list.ts…):
 * - int8 (microsecond times, counts, sums of int4) is a number; a value beyond
 *   Number.MAX_SAFE_INTEGER, which Cairn never writes, is a bigint rather than a wrong number;
 * - numeric (what sum() and avg() of int8 give) and float8 are numbers;
 * - json and jsonb are their JSON text, read and written: a row's `attributes` is the string
 *   SQLite gives, for JSON.parse. A string given for a jsonb parameter is taken as JSON text
 *   (JSON.stringify's output); any other value is stringified.
 */
const types = {
  int8: {
    to: 20,
    from: [20],
    serialize: (value: number | bigint | string) => String(value),
    parse: (text: string): number | bigint => {
      const value = Number(text);
      return Number.isSafeInteger(value) ? value : BigInt(text);
    },
  },
  numeric: {
    to: 1700,
    from: [1700],
    serialize: (value: number | string) => String(value),
    parse: (text: string) => Number(text),
  },
  json: {
    to: 3802,
    from: [114, 3802],
    serialize: (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value)),
    parse: (text: string) => text,
  },
} satisfies Record<string, postgres.PostgresType>;

/**
 * Opens a pool of connections to the database at `url` (`postgres://user:password@host:5432/db`;
 * see {@link parseDatabaseUrl} for sockets and defaults) and checks that the server is
 * PostgreSQL 15 or newer. Notices the server sends go to the logger at debug.
 *
 * Throws a DatabaseUnavailableError when the server cannot be reached or refuses the
 * connection (naming host, port, database and user, never the password), and a
 * ConfigurationError for a URL it cannot read or a server that is too old.
 *
 * @example
 * const sql = await openPostgres(process.env.CAIRN_DATABASE_URL, { maxConnections: 20 });
 * await migratePostgres(sql);
 */
export async function openPostgres(
  url: string,
  options: PostgresOptions = {},
): Promise<PostgresSql> {
  const { target, driverUrl, password } = parseDatabaseUrl(url);
  const sql = postgres(driverUrl, {
    host: target.host,
    port: target.port,
    database: target.database,
    username: target.user,
    ...(password === "" ? {} : { password }),
    max: options.maxConnections ?? 10,
    idle_timeout: options.idleTimeoutSeconds ?? 60,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    connection: { application_name: options.applicationName ?? "cairn" },
    types,
    onnotice: (notice) => log.debug(`PostgreSQL ${notice.severity}: ${notice.message}`),
  }) as unknown as PostgresSql;
  let version: { num: string; text: string };
  try {
    const [row] = await sql<Array<{ num: string; text: string }>>`
      SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS text`;
    version = row ?? { num: "", text: "" };
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw connectionFailure(error, target, password, asksForTls(driverUrl));
  }
  try {
    checkServerVersion(version.num, version.text);
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw error;
  }
  return sql;
}

/** What each failure to connect means, by the code Node or the server gives it. */
const explanations: Readonly<Record<string, string>> = {
  ECONNREFUSED: "nothing accepts connections there; is PostgreSQL running, on that port?",
  ENOENT: "there is no PostgreSQL socket there; is the server running, with that directory?",
  EACCES: "this process may not open that socket",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved just now",
  ETIMEDOUT: "the server did not answer in time",
  CONNECT_TIMEOUT: "the server did not answer in time",
  EHOSTUNREACH: "the host cannot be reached",
  ENETUNREACH: "the host's network cannot be reached",
  ECONNRESET: "the server closed the connection",
  CONNECTION_CLOSED: "the server closed the connection",
  "28P01": "the server refused the password for that user",
  "28000": "the server refused the connection",
  "3D000": "the database does not exist; create it (createdb) or correct the URL",
  "53300": "the server has no connection slot left",
  "57P03": "the server is starting up or shutting down; try again in a moment",
};

/**
 * The error for a failure to connect: what it means and, from the server, its own words (which
 * name no password). The password is scrubbed from whatever is kept all the same, and the
 * driver's error is not attached, so nothing it carries can reach a log.
 */
function connectionFailure(
  error: unknown,
  target: DatabaseTarget,
  password: string,
  tls: boolean,
): DatabaseUnavailableError {
  const code =
    typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  const message = error instanceof Error ? error.message : String(error);
  // A server without TLS drops a connection that asks for it, which tells nothing more.
  const explanation =
    tls && (code === "ECONNRESET" || code === "CONNECTION_CLOSED")
      ? "the server closed the connection when asked for TLS (sslmode in the URL); does it accept TLS connections?"
      : explanations[code];
  const fromServer = error instanceof postgres.PostgresError ? `: ${message}` : "";
  const detail =
    explanation === undefined
      ? `the first query failed: ${message}`
      : `${explanation}${fromServer}`;
  const scrub = (text: string) => (password === "" ? text : text.replaceAll(password, "***"));
  return new DatabaseUnavailableError(target, scrub(code || "unknown"), scrub(detail));
}

/** Whether the URL asks for TLS (sslmode require, verify-ca or verify-full, or ssl=true). */
function asksForTls(driverUrl: string): boolean {
  const query = driverUrl.includes("?") ? driverUrl.slice(driverUrl.indexOf("?")) : "";
  const parameters = new URLSearchParams(query);
  const mode = parameters.get("sslmode");
  return (
    (mode !== null && ["require", "verify-ca", "verify-full"].includes(mode)) ||
    parameters.get("ssl") === "true"
  );
}
