import { ConfigurationError } from "../../../core/errors/index.js";

/** The oldest PostgreSQL major version Cairn runs on. */
export const minimumServerMajor = 15;

/**
 * The major version in a server's `server_version_num`: 150004 is 15 (15.4), 90624 is 9 (9.6.24,
 * from before version 10 numbered majors by their first two parts). Undefined when the text is
 * not such a number.
 */
export function serverMajorVersion(versionNum: string): number | undefined {
  if (!/^\d{5,7}$/.test(versionNum.trim())) return undefined;
  return Math.floor(Number(versionNum) / 10000);
}

/**
 * Refuses a server older than {@link minimumServerMajor}, naming the version it found
 * (`server_version`, as the server prints it, and `server_version_num`).
 */
export function checkServerVersion(versionNum: string, version: string): void {
  const major = serverMajorVersion(versionNum);
  if (major === undefined) {
    throw new ConfigurationError(
      `could not read the PostgreSQL server's version (server_version_num ${JSON.stringify(versionNum)}, server_version ${JSON.stringify(version)}); Cairn needs PostgreSQL ${minimumServerMajor} or newer`,
    );
  }
  if (major < minimumServerMajor) {
    throw new ConfigurationError(
      `the database server is PostgreSQL ${version} (server_version_num ${versionNum}), and Cairn needs PostgreSQL ${minimumServerMajor} or newer: upgrade it, or give --database a newer server`,
    );
  }
}
