import type { DatabaseSync } from "node:sqlite";
import { ConfigurationError } from "../core/errors/index.js";
import type { MasterKey } from "../sandbox/runner/secrets/master-key.js";
import type { RateLimitStore } from "./http/rate-limit.js";
import { type BatchIngester, inProcessIngester } from "./ingest/batch-ingester.js";
import { WorkerIngester } from "./ingest/worker-ingester.js";
import { openPostgres, type PostgresSql } from "./store/postgres/connection.js";
import { describeTarget, parseDatabaseUrl } from "./store/postgres/database-url.js";
import { advisoryLocks, migratePostgres } from "./store/postgres/migrations.js";
import { postgresStore } from "./store/postgres/postgres-store.js";
import { keepDeletingFullBuckets, postgresRateLimits } from "./store/postgres/rate-limits.js";
import { keepRetention } from "./store/postgres/retention.js";
import { SandboxDirectory } from "./store/postgres/sandbox-directory.js";
import { PostgresSecretVault } from "./store/postgres/secret-vault.js";
import { TraceNotifications } from "./store/postgres/trace-notifications.js";
import type { Project } from "./store/projects.js";
import { SearchIndexer } from "./store/search-indexer.js";
import { type SecretStores, SecretVault, sqliteSecretStores } from "./store/secret-vault.js";
import { SpanStore, type TracesStoredListener } from "./store/span-store.js";
import { sqliteStore } from "./store/sqlite-store.js";
import type { ProjectRepository, Store } from "./store/store.js";
import { WriteLock } from "./store/write-lock.js";

/** The observability store the service runs on, and how `POST /traces` bodies reach it. */
export interface OpenedStore {
  readonly store: Store;
  readonly ingester: BatchIngester;
  /** "SQLite at <file>" or "PostgreSQL at <host:port>, database … as user …" (no password). */
  readonly description: string;
  /**
   * Runs `work` while no other instance on the same database runs its own: the first start's
   * project is made once when several instances start together.
   */
  whileStarting<T>(work: () => Promise<T>): Promise<T>;
  /**
   * The shared directory of every instance's sandboxes (PostgreSQL), where a runner counts as
   * gone after `staleAfterMs` without a heartbeat; undefined on SQLite, where one service runs.
   */
  readonly sandboxDirectory?: (staleAfterMs: number) => SandboxDirectory;
  /**
   * The secret stores on this engine, sealed and opened with `master`: in the SQLite file, or in
   * the shared database (their sandboxes' rows and agent channel secrets stay in the file).
   */
  openVault(master: MasterKey): SecretStores;
  /** Where the rate limits count, shared by the instances on the database; undefined: in memory. */
  readonly rateLimits?: RateLimitStore;
  /** Stops what the store runs (ingest workers, indexing, retention) and closes its connections. */
  close(): Promise<void>;
}

export interface StoreSettings {
  /** `postgres://…` for PostgreSQL; undefined for the SQLite file `db` is open on. */
  readonly databaseUrl: string | undefined;
  /** Days of spans kept (PostgreSQL only); undefined keeps everything. */
  readonly retentionDays: number | undefined;
  /** Ingest worker threads for the SQLite file (0: the main thread). */
  readonly workers: number;
  /**
   * Told of the traces that gained spans, after their commit (the live events): on
   * PostgreSQL, those stored through the other instances on the database too.
   */
  readonly tracesStored: TracesStoredListener;
  /**
   * Told when traces may have been stored through another instance without `tracesStored`
   * hearing of it (PostgreSQL: the connection listening for them was lost, and is back).
   */
  readonly changesMissed: () => void;
}

/** Opens the store the settings choose: the SQLite file `db` is open on, or PostgreSQL. */
export async function openStore(
  db: DatabaseSync,
  dbPath: string,
  settings: StoreSettings,
): Promise<OpenedStore> {
  if (settings.databaseUrl === undefined) {
    if (settings.retentionDays !== undefined) {
      throw new ConfigurationError(
        "retentionDays (--retention-days) applies to a PostgreSQL store: give a database URL (--database, CAIRN_DATABASE_URL) too",
      );
    }
    return openSqlite(db, dbPath, settings);
  }
  return openPostgresStore(db, settings.databaseUrl, settings);
}

function openSqlite(db: DatabaseSync, dbPath: string, settings: StoreSettings): OpenedStore {
  // Every thread that writes spans takes turns through one lock.
  const lock = new WriteLock();
  // Spans are added to the search index after they are stored, off the ingest path.
  const searchIndexer = new SearchIndexer((limit) => spans.indexForSearch(limit));
  const tracesStored: TracesStoredListener = (projectId, hexes) => {
    settings.tracesStored(projectId, hexes);
    searchIndexer.stored();
  };
  const spans = new SpanStore(db, lock, tracesStored);
  // First what an earlier run left (or a store from before the index).
  searchIndexer.stored();
  const store = sqliteStore(db, spans);
  const ingester: BatchIngester =
    settings.workers > 0
      ? new WorkerIngester(
          dbPath,
          lock,
          settings.workers,
          inProcessIngester(store.spans),
          tracesStored,
        )
      : inProcessIngester(store.spans);
  return {
    store,
    ingester,
    description: `SQLite at ${dbPath}`,
    // The data directory's lock already keeps every other service out.
    whileStarting: (work) => work(),
    openVault: (master) => sqliteSecretStores(new SecretVault(db, master)),
    async close() {
      searchIndexer.close();
      await ingester.close();
    },
  };
}

async function openPostgresStore(
  db: DatabaseSync,
  url: string,
  settings: StoreSettings,
): Promise<OpenedStore> {
  const { target } = parseDatabaseUrl(url);
  const sql = await openPostgres(url);
  // The other instances' ingests reach this one's live events, and its own reach theirs.
  const notifications = new TraceNotifications(sql);
  try {
    await migratePostgres(sql);
    await notifications.listen({
      stored: settings.tracesStored,
      reconnected: settings.changesMissed,
    });
  } catch (error) {
    await sql.end({ timeout: 5 });
    throw error;
  }
  const shared = postgresStore(sql, {
    onTracesStored: settings.tracesStored,
    announceTraces: notifications.announce,
  });
  const store: Store = { ...shared, projects: withLocalProjects(shared.projects, db) };
  const stopRetention =
    settings.retentionDays === undefined ? undefined : keepRetention(sql, settings.retentionDays);
  const stopBucketCleanup = keepDeletingFullBuckets(sql);
  // Bodies are parsed and stored on the main thread: PostgreSQL does the writing.
  const ingester = inProcessIngester(store.spans);
  return {
    store,
    ingester,
    description: describeTarget(target),
    whileStarting: (work) => whileHolding(sql, work),
    sandboxDirectory: (staleAfterMs) => new SandboxDirectory(sql, staleAfterMs),
    openVault: (master) => new PostgresSecretVault(sql, db, master),
    rateLimits: postgresRateLimits(sql),
    async close() {
      notifications.close();
      await stopRetention?.();
      await stopBucketCleanup();
      await ingester.close();
      await store.close();
    },
  };
}

/** Runs `work` holding the database's start lock (a session lock on a connection of its own). */
async function whileHolding<T>(sql: PostgresSql, work: () => Promise<T>): Promise<T> {
  const connection = await sql.reserve();
  try {
    await connection`SELECT pg_advisory_lock(${advisoryLocks.space}, ${advisoryLocks.firstStart})`;
    try {
      return await work();
    } finally {
      await connection`SELECT pg_advisory_unlock(${advisoryLocks.space}, ${advisoryLocks.firstStart})`;
    }
  } finally {
    connection.release();
  }
}

/**
 * The projects of the shared database, each copied into this instance's own SQLite file the
 * first time a request names it: the records this instance keeps there (its sandboxes, secret
 * stores and agents) refer to their project.
 */
function withLocalProjects(projects: ProjectRepository, db: DatabaseSync): ProjectRepository {
  const copied = new Set<string>();
  const insert = db.prepare(
    "INSERT OR IGNORE INTO projects (id, name, created_at) VALUES (?, ?, ?)",
  );
  const copy = <T extends Project | undefined>(project: T): T => {
    if (project !== undefined && !copied.has(project.id)) {
      insert.run(project.id, project.name, new Date().toISOString());
      copied.add(project.id);
    }
    return project;
  };
  return {
    isEmpty: () => projects.isEmpty(),
    createProject: async (name, key) => {
      const created = await projects.createProject(name, key);
      copy(created.project);
      return created;
    },
    byId: async (id) => copy(await projects.byId(id)),
    callerForKey: async (key) => {
      const caller = await projects.callerForKey(key);
      copy(caller?.project);
      return caller;
    },
  };
}
