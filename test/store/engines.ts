// The shared store suite's two engines: every case in test/store/ runs once on SQLite and once
// on PostgreSQL, against the same `Store` interface, and must give the same answers. The
// PostgreSQL run starts a throwaway cluster for the file (Debian's postgresql package) and a
// fresh, migrated database for each case.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterEach, describe, type TestContext } from "vitest";
import { openDatabase } from "../../src/server/store/database.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { postgresStore } from "../../src/server/store/postgres/postgres-store.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { sqliteStore } from "../../src/server/store/sqlite-store.js";
import type { Store, StoreEngine } from "../../src/server/store/store.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

export interface EngineUnderTest {
  readonly name: StoreEngine;
  /**
   * A fresh, empty store (a new SQLite file; a new PostgreSQL database), closed after the case.
   * Skips the case, with the reason, when the engine is not installed.
   */
  open(context: TestContext, options?: { now?: () => number }): Promise<Store>;
  /**
   * Another client of the store the case opened, as a second instance of the service has one:
   * a second handle on the SQLite file; a second pool of connections to the PostgreSQL database.
   */
  openSecondClient(options?: { now?: () => number }): Promise<Store>;
  /** The rows a fixed query reads from the case's database (what the store keeps, unseen). */
  rows(query: string): Promise<Array<Record<string, unknown>>>;
}

/** Declares the cases of `body` once per engine, under `<title> (<engine>)`. */
export function eachEngine(title: string, body: (engine: EngineUnderTest) => void): void {
  describe(`${title} (sqlite)`, () => body(sqliteEngine()));
  describe(`${title} (postgres)`, () => body(postgresEngine()));
}

function sqliteEngine(): EngineUnderTest {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  let opened: { path: string; db: DatabaseSync } | undefined;
  const client = (path: string, options: { now?: () => number }) => {
    const db = openDatabase(path);
    const store = sqliteStore(db, new SpanStore(db), options);
    closers.push(async () => {
      await store.close();
      db.close();
    });
    return { db, store };
  };
  return {
    name: "sqlite",
    async open(_context, options = {}) {
      const dir = mkdtempSync(join(tmpdir(), "cairn-store-"));
      closers.push(async () => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, "cairn.db");
      const { db, store } = client(path, options);
      opened = { path, db };
      return store;
    },
    async openSecondClient(options = {}) {
      if (opened === undefined) throw new Error("open the store first");
      return client(opened.path, options).store;
    },
    async rows(query) {
      if (opened === undefined) throw new Error("open the store first");
      return opened.db.prepare(query).all() as Array<Record<string, unknown>>;
    },
  };
}

function postgresEngine(): EngineUnderTest {
  const clusterFor = postgresClusterPerFile();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  let opened: { url: string; sql: PostgresSql } | undefined;
  const client = async (url: string, options: { now?: () => number }) => {
    const sql = await openPostgres(url);
    const store = postgresStore(sql, options);
    closers.push(() => store.close());
    return { sql, store };
  };
  return {
    name: "postgres",
    async open(context, options = {}) {
      const cluster = clusterFor(context);
      const url = await cluster.createDatabase(undefined, { migrated: true });
      const { sql, store } = await client(url, options);
      opened = { url, sql };
      return store;
    },
    async openSecondClient(options = {}) {
      if (opened === undefined) throw new Error("open the store first");
      return (await client(opened.url, options)).store;
    },
    async rows(query) {
      if (opened === undefined) throw new Error("open the store first");
      return [...(await opened.sql.unsafe(query))];
    },
  };
}
