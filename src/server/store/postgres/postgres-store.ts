import type { SessionLifetimes } from "../../dashboard/session-store.js";
import type { TracesStoredListener } from "../span-store.js";
import type { Store } from "../store.js";
import { postgresAnalytics } from "./analytics.js";
import type { PostgresSql } from "./connection.js";
import {
  postgresDashboardSessions,
  postgresEvals,
  postgresProjects,
  postgresScores,
  postgresVersions,
} from "./records.js";
import { postgresSessions } from "./sessions.js";
import { postgresSpans } from "./spans.js";
import type { TracesAnnouncer } from "./trace-notifications.js";
import { postgresTraces } from "./traces.js";

export interface PostgresStoreOptions {
  /** The clock of dashboard sessions and codes (tests move it). Default `Date.now`. */
  readonly now?: () => number;
  /** How long dashboard sessions and sign-in codes last. */
  readonly lifetimes?: SessionLifetimes;
  /** Told of the traces each ingest changed, after its commit (this instance's live events). */
  readonly onTracesStored?: TracesStoredListener;
  /** Told of them inside the ingest's transaction (the other instances' live events). */
  readonly announceTraces?: TracesAnnouncer;
}

/**
 * The store on PostgreSQL: every instance of the service that shares the database gives the
 * same answers at once, since nothing is kept in a process (analytics are read from SQL). The
 * schema must be migrated first (`migratePostgres`).
 */
export function postgresStore(sql: PostgresSql, options: PostgresStoreOptions = {}): Store {
  return {
    engine: "postgres",
    projects: postgresProjects(sql),
    spans: postgresSpans(sql, options.onTracesStored, options.announceTraces),
    traces: postgresTraces(sql),
    sessions: postgresSessions(sql),
    analytics: postgresAnalytics(sql),
    versions: postgresVersions(sql),
    scores: postgresScores(sql),
    evals: postgresEvals(sql),
    dashboardSessions: postgresDashboardSessions(sql, options.now, options.lifetimes),
    close: () => sql.end({ timeout: 5 }),
  };
}
