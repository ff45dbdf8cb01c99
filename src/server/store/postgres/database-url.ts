import { ConfigurationError } from "../../../core/errors/index.js";

/** Where a database URL points: what an error or a log line may say about it (no password). */
export interface DatabaseTarget {
  /** A host name or address, or the directory of a Unix socket (it begins with `/`). */
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

/** A database URL taken apart: where it points, and what the driver is given. */
export interface ParsedDatabaseUrl {
  readonly target: DatabaseTarget;
  /**
   * The URL the driver reads its other settings from (sslmode, application_name, …), without
   * the password or the `host`, `port` and `password` parameters: those are given apart.
   */
  readonly driverUrl: string;
  /** The URL's password; empty when it has none (the driver then reads PGPASSWORD). */
  readonly password: string;
}

const schemes = new Set(["postgres:", "postgresql:"]);

/**
 * Reads a `postgres://` URL as libpq does: `postgres://user:password@host:port/database`, a
 * Unix socket's directory as the host (`postgres://user@%2Frun%2Fpostgresql/db`) or as the
 * `host` parameter (`postgres://user:password@/db?host=/run/postgresql`), the `user`, `dbname`,
 * `port` and `password` parameters, and the driver's defaults (PGHOST, PGPORT, PGUSER,
 * PGDATABASE, localhost:5432) for what it leaves out. A URL that cannot be read is a
 * ConfigurationError that does not repeat it, since it may hold a password.
 */
export function parseDatabaseUrl(
  url: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ParsedDatabaseUrl {
  const { parsed, userInfo } = readUrl(url);
  if (parsed === undefined) {
    throw new ConfigurationError(
      "the database URL is not a URL: give it as postgres://user:password@host:5432/database",
    );
  }
  if (!schemes.has(parsed.protocol)) {
    throw new ConfigurationError(
      `the database URL must begin with postgres:// or postgresql:// (it begins with ${parsed.protocol})`,
    );
  }
  const parameters = parsed.searchParams;
  const at = userInfo.indexOf(":");
  const userPart = at === -1 ? userInfo : userInfo.slice(0, at);
  const passwordPart = at === -1 ? "" : userInfo.slice(at + 1);
  const password = decode(passwordPart) || (parameters.get("password") ?? "");
  const named = decode(parsed.hostname);
  const host = named !== "" ? named : (parameters.get("host") ?? env.PGHOST ?? "localhost");
  const portText =
    parsed.port !== "" ? parsed.port : (parameters.get("port") ?? env.PGPORT ?? "5432");
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) {
    throw new ConfigurationError(
      `the database URL's port must be a whole number from 1 to 65535 (got ${JSON.stringify(portText)})`,
    );
  }
  const user =
    decode(userPart) || parameters.get("user") || env.PGUSER || env.PGUSERNAME || "postgres";
  const database =
    decode(parsed.pathname.slice(1)) || parameters.get("dbname") || env.PGDATABASE || user;
  // The driver is given every one of those apart; the URL it gets holds only the rest.
  const driver = new URL(`${parsed.protocol}//`);
  for (const [name, value] of parameters) {
    if (!["host", "port", "user", "dbname", "password"].includes(name)) {
      driver.searchParams.append(name, value);
    }
  }
  return { target: { host, port, database, user }, driverUrl: driver.toString(), password };
}

/**
 * The URL with its password (in the authority or a `password` parameter) replaced by `***`,
 * for logs and messages. A string that is not a URL gives a placeholder, never itself.
 */
export function redactDatabaseUrl(url: string): string {
  const { parsed, userInfo } = readUrl(url);
  if (parsed === undefined) return "(a database URL that is not a valid URL)";
  if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***");
  const at = userInfo.indexOf(":");
  const shownUserInfo =
    userInfo === "" ? "" : `${at === -1 ? userInfo : `${userInfo.slice(0, at)}:***`}@`;
  return parsed.toString().replace(/^[^:]+:\/\//, (scheme) => `${scheme}${shownUserInfo}`);
}

/**
 * The URL without its user information (`user:password@`), parsed, and that information. libpq
 * takes a user with no host (`postgres://me@/db?host=/run/postgresql`), which the URL standard
 * does not: parsing without it takes both.
 */
function readUrl(url: string): { parsed: URL | undefined; userInfo: string } {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^/?#]*)@)?(.*)$/is.exec(url);
  const userInfo = match?.[2] ?? "";
  try {
    return { parsed: new URL(match === null ? url : `${match[1]}${match[3]}`), userInfo };
  } catch {
    return { parsed: undefined, userInfo };
  }
}

/** "host 127.0.0.1 port 5432" or "the Unix socket in /run/postgresql (port 5432)", and the rest. */
export function describeTarget(target: DatabaseTarget): string {
  const where = target.host.startsWith("/")
    ? `the Unix socket in ${target.host} (port ${target.port})`
    : `${target.host}:${target.port}`;
  return `PostgreSQL at ${where}, database ${JSON.stringify(target.database)} as user ${JSON.stringify(target.user)}`;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
