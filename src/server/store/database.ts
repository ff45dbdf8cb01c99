import { DatabaseSync } from "node:sqlite";
import { migrate } from "./migrations.js";

/**
 * Opens (or creates) the store: one SQLite file in WAL mode, migrated to the current schema.
 * `synchronous = NORMAL` in WAL mode keeps every committed transaction across a crash or
 * `kill -9` of the process; only a power loss can take the last commits back.
 */
export function openDatabase(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  try {
    db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
      PRAGMA temp_store = MEMORY;
    `);
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Runs `work` in one transaction: all of it is stored, or none. */
export function transaction<R>(db: DatabaseSync, work: () => R): R {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
