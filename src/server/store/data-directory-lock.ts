import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { setTimeout as sleep } from "node:timers/promises";
import { CairnError } from "../../core/errors/index.js";

const marker = Symbol.for("cairn.error.data_directory_in_use");

/**
 * Another service (`cairn dev`, or an app's `createServer()`) holds the data directory. Nothing
 * in it was touched. {@link DataDirectoryInUseError.pid} is the holder's pid, when this system
 * tells it.
 */
export class DataDirectoryInUseError extends CairnError {
  readonly [marker] = true;
  readonly dataDir: string;
  readonly pid: number | undefined;

  constructor(dataDir: string, pid: number | undefined, waitedMs: number) {
    const who = pid === undefined ? "another process" : `process ${pid}`;
    const waited = waitedMs > 0 ? ` (waited ${(waitedMs / 1000).toFixed(1)} s for it)` : "";
    super(
      "data_directory_in_use",
      `data directory ${dataDir} is in use by ${who}${waited}: stop that service, or give this one another data directory (--data-dir, or CAIRN_DATA_DIR)`,
    );
    this.name = "DataDirectoryInUseError";
    this.dataDir = dataDir;
    this.pid = pid;
  }

  static override isInstance(error: unknown): error is DataDirectoryInUseError {
    return typeof error === "object" && error !== null && marker in error;
  }
}

/** How often a waiting service tries the lock again. */
const retryMs = 50;

/**
 * The one-owner lock of a data directory: an exclusive SQLite lock (POSIX `fcntl`, which the
 * kernel drops when the process dies, however it dies) on `<dataDir>/cairn.lock`, held from
 * before anything in the directory is touched until the service has closed. A second service
 * on the same directory, in this process or another, cannot take it.
 */
export class DataDirectoryLock {
  private constructor(
    private readonly db: DatabaseSync,
    readonly path: string,
  ) {}

  /**
   * Takes the lock, waiting up to `waitMs` for a service that is still closing to let go;
   * then throws {@link DataDirectoryInUseError}. Waits without blocking the event loop.
   */
  static async acquire(dataDir: string, waitMs: number): Promise<DataDirectoryLock> {
    const path = join(dataDir, "cairn.lock");
    const started = Date.now();
    for (;;) {
      const lock = tryLock(path);
      if (lock !== undefined) return new DataDirectoryLock(lock, path);
      const waited = Date.now() - started;
      if (waited >= waitMs) {
        throw new DataDirectoryInUseError(dataDir, await lockHolder(path), waitMs > 0 ? waited : 0);
      }
      await sleep(Math.min(retryMs, waitMs - waited));
    }
  }

  release(): void {
    if (this.db.isOpen) this.db.close();
  }
}

function tryLock(path: string): DatabaseSync | undefined {
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    // Exclusive locking mode keeps the lock that the first write transaction takes until the
    // connection closes; no journal file is needed for a database that holds nothing.
    db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = OFF; BEGIN EXCLUSIVE; COMMIT;");
    return db;
  } catch (error) {
    db.close();
    if (/locked|busy/i.test((error as Error).message)) return undefined;
    throw error;
  }
}

/** The pid that holds a POSIX lock on `path`, from /proc/locks (Linux); else undefined. */
async function lockHolder(path: string): Promise<number | undefined> {
  let file: { ino: number; dev: number };
  try {
    file = statSync(path);
  } catch {
    return undefined;
  }
  const wanted = `${hex(deviceMajor(file.dev))}:${hex(deviceMinor(file.dev))}:${file.ino}`;
  const locks = await readFile("/proc/locks", "utf8").catch(() => "");
  for (const line of locks.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 5957 fe:00:2146407 1073741824 1073742335"
    const fields = line.trim().split(/\s+/);
    const [, , , , pid, device] = fields;
    if (fields[1] !== "POSIX" || device === undefined) continue;
    const [major = "", minor = "", inode = ""] = device.split(":");
    if (
      `${hex(Number.parseInt(major, 16))}:${hex(Number.parseInt(minor, 16))}:${inode}` === wanted
    ) {
      return Number(pid);
    }
  }
  return undefined;
}

// Linux's dev_t: the major number in bits 8–19 and 32–43, the minor in bits 0–7 and 12–31.
function deviceMajor(dev: number): number {
  return Number((BigInt(dev) >> 8n) & 0xfffn) | Number((BigInt(dev) >> 32n) & ~0xfffn);
}

function deviceMinor(dev: number): number {
  return Number(BigInt(dev) & 0xffn) | Number((BigInt(dev) >> 12n) & ~0xffn);
}

function hex(value: number): string {
  return value.toString(16);
}
