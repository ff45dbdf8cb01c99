import type { DatabaseSync } from "node:sqlite";
import { DashboardSessionStore, type SessionLifetimes } from "../dashboard/session-store.js";
import { costReport, metricsReport, performanceReport } from "./analytics.js";
import { AnalyticsView } from "./analytics-view.js";
import { EvalStore } from "./evals.js";
import { ProjectStore } from "./projects.js";
import { ScoreStore } from "./scores.js";
import { getSessionSummary, listSessions, sessionEvents, sessionTraces } from "./sessions.js";
import type { SpanStore } from "./span-store.js";
import type { AnalyticsQueries, Store } from "./store.js";
import { getTraceSummary, listTraces } from "./trace-list.js";
import { searchCatchUpSpans } from "./trace-search.js";
import { VersionStore } from "./versions.js";

export interface SqliteStoreOptions {
  /** The clock of dashboard sessions and codes (tests move it). Default `Date.now`. */
  readonly now?: () => number;
  /** How long dashboard sessions and sign-in codes last. */
  readonly lifetimes?: SessionLifetimes;
}

/**
 * The store on the embedded SQLite file. SQLite answers at once (node:sqlite is synchronous):
 * each method does its work before it returns, and hands the answer back as the interface's
 * promise. `spans` is the service's own span store, with the write lock its ingest workers share.
 */
export function sqliteStore(
  db: DatabaseSync,
  spans: SpanStore,
  options: SqliteStoreOptions = {},
): Store {
  return {
    engine: "sqlite",
    projects: promised(new ProjectStore(db), ["isEmpty", "createProject", "byId", "callerForKey"]),
    spans: promised(spans, [
      "ingest",
      "ingestAll",
      "attachLogEvents",
      "traceSpans",
      "traceSpansWithoutPayloads",
      "span",
    ]),
    traces: {
      list: async (projectId, filters) => {
        // Spans are indexed a moment after they are stored: a search first indexes what is
        // left, so it finds what was just sent (a burst beyond this is found once indexed).
        if (filters.search !== undefined) spans.indexForSearch(searchCatchUpSpans);
        return listTraces(db, projectId, filters);
      },
      summary: async (projectId, traceHex) => getTraceSummary(db, projectId, traceHex),
    },
    sessions: {
      list: async (projectId, filters) => listSessions(db, projectId, filters),
      summary: async (projectId, sessionId) => getSessionSummary(db, projectId, sessionId),
      traces: async (projectId, sessionId, page) => sessionTraces(db, projectId, sessionId, page),
      events: async (projectId, sessionId) => sessionEvents(db, projectId, sessionId),
    },
    analytics: sqliteAnalytics(new AnalyticsView(db)),
    versions: promised(new VersionStore(db), ["publish", "rollback", "list", "current", "history"]),
    scores: promised(new ScoreStore(db), ["add", "forTrace"]),
    evals: promised(new EvalStore(db), [
      "upsertCases",
      "cases",
      "datasets",
      "addRun",
      "addResults",
      "run",
      "runPage",
    ]),
    dashboardSessions: promised(new DashboardSessionStore(db, options.now, options.lifetimes), [
      "createCode",
      "signInWithCode",
      "signIn",
      "find",
      "revoke",
    ]),
    // The file is closed by its owner (createServer), after the workers that share it.
    close: async () => {},
  };
}

/** The reports over the view's per-day cells, which follow the spans table as it grows. */
function sqliteAnalytics(view: AnalyticsView): AnalyticsQueries {
  return {
    metrics: async (projectId, query) => metricsReport(await view.cells(projectId), query),
    costs: async (projectId, query) => costReport(await view.cells(projectId), query),
    performance: async (projectId, query) => performanceReport(await view.cells(projectId), query),
  };
}

type Promised<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/** The named methods of a synchronous store, each answering with a promise of its result. */
function promised<T extends object, K extends keyof T>(
  target: T,
  methods: readonly K[],
): Promised<Pick<T, K>> {
  const wrapped: Partial<Record<K, unknown>> = {};
  for (const name of methods) {
    const method = target[name] as (...args: unknown[]) => unknown;
    wrapped[name] = async (...args: unknown[]) => method.apply(target, args);
  }
  return wrapped as Promised<Pick<T, K>>;
}
