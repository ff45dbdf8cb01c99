// A benchmark's data folder built once and kept between runs under os.tmpdir(): named by what
// it holds (the schema, the generators' versions), so a change to either builds a new one; other versions, and builds a killed run left half-done, are removed. BENCH_REBUILD=1
// rebuilds it; delete the folder to reclaim the disk.

import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/server/store/database.js";

/**
 * The schema a new database gets: its version (PRAGMA user_version after the migrations) and, as
 * `key`, that version with a digest of every table's, index's and view's SQL, so that a step
 * changed before its release also names a new store.
 */
export function currentSchema(): { version: number; key: string } {
  const db = openDatabase(":memory:");
  try {
    const { user_version: version } = db.prepare("PRAGMA user_version").get() as {
      user_version: number;
    };
    const sql = db
      .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
      .all()
      .map((row) => row.sql)
      .join("\n");
    return {
      version,
      key: `${version}-${createHash("sha256").update(sql).digest("hex").slice(0, 8)}`,
    };
  } finally {
    db.close();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface CachedStore<Meta> {
  readonly dir: string;
  readonly meta: Meta;
  readonly builtNow: boolean;
}

/**
 * The folder os.tmpdir()/`root`/`name` and the meta.json `build` wrote in it; built first (into
 * a folder of this process's, renamed when done) when there is none, when `fresh(meta)` says the
 * one there is too old, or when BENCH_REBUILD is set.
 */
export function cachedStore<Meta>(options: {
  readonly root: string;
  readonly name: string;
  /** Printed before building, as `<announce> in <dir> (once; later runs reuse it)…`. */
  readonly announce: string;
  readonly build: (dir: string) => Meta;
  readonly fresh?: (meta: Meta) => boolean;
}): CachedStore<Meta> {
  const root = join(tmpdir(), options.root);
  const dir = join(root, options.name);
  mkdirSync(root, { recursive: true });
  for (const entry of readdirSync(root)) {
    const builder = /\.building-(\d+)$/.exec(entry)?.[1];
    if (entry === options.name || (builder !== undefined && isRunning(Number(builder)))) continue;
    rmSync(join(root, entry), { recursive: true, force: true });
  }
  let existing: Meta | undefined;
  try {
    existing = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as Meta;
  } catch {
    existing = undefined;
  }
  if (existing !== undefined && !process.env.BENCH_REBUILD && (options.fresh?.(existing) ?? true)) {
    return { dir, meta: existing, builtNow: false };
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`${options.announce} in ${dir} (once; later runs reuse it)…`);
  const building = `${dir}.building-${process.pid}`;
  try {
    mkdirSync(building, { recursive: true });
    const meta = options.build(building);
    writeFileSync(join(building, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
    renameSync(building, dir);
    return { dir, meta, builtNow: true };
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
