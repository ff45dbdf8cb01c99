import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigurationError } from "../../../core/errors/index.js";

/** The key every secret value is sealed with, and the short id stored beside each value. */
export interface MasterKey {
  readonly key: Buffer;
  /** The first 8 bytes of the key's SHA-256, in hex: names the key without revealing it. */
  readonly id: string;
  /** Where it came from, for messages: the variable or the file. */
  readonly source: string;
}

/** The master key file of a data directory. */
export function masterKeyFile(dataDir: string): string {
  return join(dataDir, "master.key");
}

/**
 * The master key: `CAIRN_MASTER_KEY` when set (32 bytes as base64 or 64 hex digits), else the
 * data directory's `master.key`, made at first start (32 random bytes, mode 0600). Throws a
 * `ConfigurationError` naming the variable or the file when the key is not 32 bytes, or when the
 * file can be read by other users.
 */
export function loadMasterKey(dataDir: string, variable: string | undefined): MasterKey {
  if (variable !== undefined) return parseMasterKey(variable, "CAIRN_MASTER_KEY");
  const file = masterKeyFile(dataDir);
  if (!existsSync(file)) {
    writeKeyFile(file, randomBytes(32));
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigurationError(
      `the master key file ${file} can be read by other users (mode ${mode.toString(8)}); run \`chmod 600 ${file}\``,
    );
  }
  return parseMasterKey(readFileSync(file, "utf8").trim(), file);
}

/** A new random master key, as `cairn secrets rotate-key` makes it. */
export function newMasterKey(source: string): MasterKey {
  return keyOf(randomBytes(32), source);
}

/** Writes `key` to `file` (mode 0600), replacing it atomically. */
export function writeKeyFile(file: string, key: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${key.toString("base64")}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/**
 * A master key from its text: 32 bytes as base64 or 64 hex digits. Throws a
 * `ConfigurationError` naming `source` otherwise.
 */
export function parseMasterKey(text: string, source: string): MasterKey {
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, "hex")
    : /^[A-Za-z0-9+/]{43}=?$/.test(text)
      ? Buffer.from(text, "base64")
      : undefined;
  if (key === undefined || key.length !== 32) {
    throw new ConfigurationError(
      `${source} must hold a 32-byte key as base64 (44 characters) or 64 hex digits; make one with \`openssl rand -base64 32\``,
    );
  }
  return keyOf(key, source);
}

function keyOf(key: Buffer, source: string): MasterKey {
  return { key, id: createHash("sha256").update(key).digest("hex").slice(0, 16), source };
}
