import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirectoryInUseError, DataDirectoryLock } from "./data-directory-lock.js";

const folders: string[] = [];
const locks: DataDirectoryLock[] = [];

afterEach(() => {
  for (const lock of locks.splice(0)) lock.release();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "cairn-lock-"));
  folders.push(path);
  return path;
}

async function take(dataDir: string, waitMs = 0): Promise<DataDirectoryLock> {
  const lock = await DataDirectoryLock.acquire(dataDir, waitMs);
  locks.push(lock);
  return lock;
}

describe("the data directory lock", () => {
  it("lets one holder in, in this process too, and names the holder to the next", async () => {
    const dataDir = folder();
    await take(dataDir);
    const refused = await take(dataDir).catch((error: unknown) => error);
    expect(DataDirectoryInUseError.isInstance(refused)).toBe(true);
    expect((refused as DataDirectoryInUseError).pid).toBe(process.pid);
    expect((refused as Error).message).toBe(
      `data directory ${dataDir} is in use by process ${process.pid}: stop that service, or give this one another data directory (--data-dir, or CAIRN_DATA_DIR)`,
    );
  });

  it("is free again once released", async () => {
    const dataDir = folder();
    (await take(dataDir)).release();
    await expect(take(dataDir)).resolves.toBeInstanceOf(DataDirectoryLock);
  });

  it("waits for a holder that is letting go, without blocking the event loop", async () => {
    const dataDir = folder();
    const first = await take(dataDir);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    setTimeout(() => first.release(), 200);
    const second = await take(dataDir, 5_000);
    clearInterval(ticker);
    expect(second).toBeInstanceOf(DataDirectoryLock);
    expect(ticks).toBeGreaterThan(5);
  });

  it("gives up after the wait, saying how long it waited", async () => {
    const dataDir = folder();
    await take(dataDir);
    await expect(take(dataDir, 150)).rejects.toThrow(/in use by process \d+ \(waited 0\.\d s/);
  });
});
