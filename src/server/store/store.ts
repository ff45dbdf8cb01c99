// The store of the observability service, as the routes see it: one interface, two engines.
// SQLite (sqlite-store.ts) is the default, embedded in the process; PostgreSQL (postgres/) is
// for a team that runs several instances. Both give the same answers and the same errors: the
// shared suite in test/store/ runs every case against each.

import type { CostReport, MetricsReport, PerformanceReport } from "../../core/wire/analytics.js";
import type { Dataset, TestCase, TestRun, TestRunDetail } from "../../core/wire/evals.js";
import type { ExportBatch, ExportedSpan } from "../../core/wire/index.js";
import type { Score } from "../../core/wire/scores.js";
import type { SessionEvent, SessionSummary } from "../../core/wire/sessions.js";
import type { VersionEvent, Version as VersionRecord } from "../../core/wire/versions.js";
import type { CodeRefusal, DashboardSession, SessionRefusal } from "../dashboard/session-store.js";
import type { SpanLogEvents } from "../ingest/otlp/logs/log-record.js";
import type { AnalyticsQuery } from "./analytics.js";
import type { CaseInput, ResultsInput, ResultsRefusal, RunCursor, RunInput } from "./evals.js";
import type { Caller, Project } from "./projects.js";
import type { NewScore } from "./scores.js";
import type {
  SessionCursor,
  SessionFilters,
  SessionTrace,
  SessionTraceCursor,
} from "./sessions.js";
import type { Omitted } from "./span-payloads.js";
import type { StoredSpan } from "./span-rows.js";
import type { IngestResult } from "./span-store.js";
import type { TraceCursor, TraceFilters, TraceListRow } from "./trace-list.js";

/** Which engine holds the data. */
export type StoreEngine = "sqlite" | "postgres";

/** Projects and their API keys (stored as SHA-256). */
export interface ProjectRepository {
  isEmpty(): Promise<boolean>;
  /** A project with one API key; `key` chooses it (CAIRN_API_KEY at first start). */
  createProject(name: string, key?: string): Promise<{ project: Project; apiKey: string }>;
  byId(id: string): Promise<Project | undefined>;
  /** The caller an API key stands for, if it is a key of some project. */
  callerForKey(key: string): Promise<Caller | undefined>;
}

/** Spans: stored idempotently on (trace_id, span_id), read back by trace. */
export interface SpanRepository {
  /** Stores a batch whole or not at all; spans already stored count as duplicates. */
  ingest(projectId: string, batch: ExportBatch): Promise<IngestResult>;
  /** Several batches (one per service, as OTLP sends them) in one transaction. */
  ingestAll(projectId: string, batches: readonly ExportBatch[]): Promise<IngestResult>;
  /** Log events merged into stored spans, the rest kept for their spans (an hour at most). */
  attachLogEvents(projectId: string, spans: readonly SpanLogEvents[]): Promise<number>;
  /** The spans of a trace, oldest first; empty when the project has no such trace. */
  traceSpans(projectId: string, traceHex: string): Promise<ExportedSpan[]>;
  /** The same without input, output and large attribute values (each names what it left out). */
  traceSpansWithoutPayloads(
    projectId: string,
    traceHex: string,
  ): Promise<Array<ExportedSpan & { omitted: Omitted }>>;
  /** One whole span with its resource. */
  span(projectId: string, traceHex: string, spanId: string): Promise<StoredSpan | undefined>;
}

/** Traces as lists and summaries, from the summary rows kept at ingest. */
export interface TraceQueries {
  list(
    projectId: string,
    filters: TraceFilters,
  ): Promise<{ traces: TraceListRow[]; next: TraceCursor | null }>;
  summary(projectId: string, traceHex: string): Promise<TraceListRow | undefined>;
}

/** Sessions: the traces that share a session id. */
export interface SessionQueries {
  list(
    projectId: string,
    filters: SessionFilters,
  ): Promise<{ sessions: SessionSummary[]; next: SessionCursor | null }>;
  summary(projectId: string, sessionId: string): Promise<SessionSummary | undefined>;
  traces(
    projectId: string,
    sessionId: string,
    page: { limit: number; cursor?: SessionTraceCursor | undefined },
  ): Promise<{ traces: SessionTrace[]; next: SessionTraceCursor | null }>;
  events(projectId: string, sessionId: string): Promise<SessionEvent[]>;
}

/** The analytics reports over the spans of a period. */
export interface AnalyticsQueries {
  metrics(projectId: string, query: AnalyticsQuery): Promise<MetricsReport>;
  costs(projectId: string, query: AnalyticsQuery): Promise<CostReport>;
  performance(projectId: string, query: AnalyticsQuery): Promise<PerformanceReport>;
}

/** Versions of a project's app, with the history of publishes and rollbacks. */
export interface VersionRepository {
  /** Publishes and makes current; undefined when `version` exists already. */
  publish(
    projectId: string,
    version: string,
    description: string,
    actor: string,
  ): Promise<VersionRecord | undefined>;
  /** Makes an earlier version current again; undefined when the project has no such version. */
  rollback(
    projectId: string,
    versionId: string,
    actor: string,
  ): Promise<{ version: VersionRecord; event: VersionEvent } | undefined>;
  list(projectId: string): Promise<VersionRecord[]>;
  current(projectId: string): Promise<VersionRecord | undefined>;
  history(projectId: string): Promise<VersionEvent[]>;
}

/** Scores on traces and spans. */
export interface ScoreRepository {
  add(projectId: string, score: NewScore): Promise<Score>;
  forTrace(projectId: string, traceHex: string): Promise<Score[]>;
}

/** Datasets of test cases, and test runs with their results. */
export interface EvalRepository {
  upsertCases(projectId: string, dataset: string, cases: readonly CaseInput[]): Promise<TestCase[]>;
  cases(projectId: string, dataset?: string): Promise<TestCase[]>;
  datasets(projectId: string): Promise<Dataset[]>;
  addRun(projectId: string, input: RunInput): Promise<TestRunDetail>;
  addResults(
    projectId: string,
    runId: string,
    input: ResultsInput,
  ): Promise<TestRun | ResultsRefusal>;
  run(projectId: string, runId: string): Promise<TestRunDetail | undefined>;
  runPage(
    projectId: string,
    page: { limit: number; cursor?: RunCursor | undefined },
  ): Promise<{ runs: TestRun[]; next: RunCursor | null }>;
}

/** The dashboard's one-time sign-in codes and browser sessions (secrets kept as SHA-256). */
export interface DashboardSessionRepository {
  createCode(projectId: string, createdBy: string): Promise<{ code: string; expiresAtMs: number }>;
  signInWithCode(
    code: string,
  ): Promise<{ session: DashboardSession; cookie: string } | CodeRefusal>;
  signIn(
    projectId: string,
    signedInWith: string,
  ): Promise<{ session: DashboardSession; cookie: string }>;
  find(cookie: string): Promise<DashboardSession | SessionRefusal>;
  revoke(sessionId: string): Promise<void>;
}

/** Everything the observability API stores, on one engine. */
export interface Store {
  readonly engine: StoreEngine;
  readonly projects: ProjectRepository;
  readonly spans: SpanRepository;
  readonly traces: TraceQueries;
  readonly sessions: SessionQueries;
  readonly analytics: AnalyticsQueries;
  readonly versions: VersionRepository;
  readonly scores: ScoreRepository;
  readonly evals: EvalRepository;
  readonly dashboardSessions: DashboardSessionRepository;
  /** Waits for the writes under way, then releases the engine's connections or file. */
  close(): Promise<void>;
}
