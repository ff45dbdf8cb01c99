// A benchmark's data folder built once and kept between runs under os.tmpdir(): named by what
// it holds (the schema version, the generators' versions), so a change to either builds a new
// one; other versions, and builds a killed run left half-done, are removed. BENCH_REBUILD=1
// rebuilds it; delete the folder to reclaim the disk.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/server/store/database.js";

/** The schema version a new database gets (PRAGMA user_version after the migrations). */
export function schemaVersion(): number {
  const db = openDatabase(":memory:");
  try {
    return (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
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
