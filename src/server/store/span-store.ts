import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { ExportBatch, ExportedSpan } from "../../core/wire/index.js";
import type { SpanLogEvents } from "../ingest/otlp/logs/log-record.js";
import type { SpanTotals } from "./analytics-view.js";
import { transaction } from "./database.js";
import { LogEventJoin } from "./span-log-events.js";
import {
  type Omitted,
  type RowWithoutPayloads,
  spanColumnsWithoutPayloads,
  withoutLargeValues,
} from "./span-payloads.js";
import { isoToMicros, rowToSpan, type SpanRow, type StoredSpan } from "./span-rows.js";
import { SpanSearchIndex } from "./span-search-index.js";
import { WriteLock } from "./write-lock.js";

export interface IngestResult {
  /** Spans stored by this request. */
  readonly accepted: number;
  /** Spans already stored (a retried batch): skipped, not duplicated. */
  readonly duplicates: number;
}

/** What one call adds to a trace's summary row (traces) and its label rows. */
export interface TraceDelta extends SpanTotals {
  rootSpanId: string | null;
  name: string | null;
  kind: string | null;
  startUs: number;
  endUs: number;
  sessionId: string | null;
  version: string | null;
  tags: Set<string>;
  models: Set<string>;
  services: Set<string>;
}

/** The INSERT of one span; a span already stored is skipped (idempotent ingest). */
export const insertSpanSql = `
  INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us,
    end_us, duration_us, status, status_message, input, output, expected_output, model,
    session_id, version, tags, metadata, attributes, events, prompt_tokens,
    completion_tokens, total_tokens, cost_usd, service_name, received_at, cached_tokens,
    reasoning_tokens, span_kind, scope, links, resource)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ?, ?, ?, ?, ?, ?)
  ON CONFLICT (project_id, trace_id, span_id) DO NOTHING`;

/** The values {@link insertSpanSql} binds for a span. */
export function spanRowValues(
  projectId: string,
  span: ExportedSpan,
  resource: ExportBatch["resource"],
  receivedAt: string,
): SQLInputValue[] {
  const startUs = isoToMicros(span.start_time);
  const durationUs = Math.round(span.duration_ms * 1000);
  return [
    projectId,
    span.trace_id.slice(3),
    span.span_id,
    span.parent_span_id,
    span.name,
    span.kind,
    startUs,
    startUs + durationUs,
    durationUs,
    span.status,
    span.status_message,
    span.input,
    span.output,
    span.expected_output,
    span.model,
    span.session_id,
    span.version,
    JSON.stringify(span.tags),
    JSON.stringify(span.metadata),
    JSON.stringify(span.attributes),
    JSON.stringify(span.events),
    span.usage?.prompt_tokens ?? null,
    span.usage?.completion_tokens ?? null,
    span.usage?.total_tokens ?? null,
    span.cost_usd,
    resource.service_name,
    receivedAt,
    span.usage?.cached_tokens ?? null,
    span.usage?.reasoning_tokens ?? null,
    span.span_kind ?? null,
    span.scope === undefined || span.scope === null ? null : JSON.stringify(span.scope),
    span.links === undefined || span.links.length === 0 ? null : JSON.stringify(span.links),
    resource.attributes === undefined ? null : JSON.stringify(resource.attributes),
  ];
}

/**
 * What an upsert of a trace's summary row sets when the trace has one: the delta (`excluded`)
 * added to it. `min` and `max` name the engine's two-argument minimum and maximum.
 */
export function addTraceDelta(min: "min" | "least", max: "max" | "greatest"): string {
  return `
    name = CASE WHEN traces.root_span_id IS NULL THEN excluded.name ELSE traces.name END,
    kind = CASE WHEN traces.root_span_id IS NULL THEN excluded.kind ELSE traces.kind END,
    root_span_id = coalesce(traces.root_span_id, excluded.root_span_id),
    start_us = ${min}(traces.start_us, excluded.start_us),
    end_us = ${max}(traces.end_us, excluded.end_us),
    span_count = traces.span_count + excluded.span_count,
    error_count = traces.error_count + excluded.error_count,
    prompt_tokens = ${min}(traces.prompt_tokens + excluded.prompt_tokens, ${Number.MAX_SAFE_INTEGER}),
    completion_tokens = ${min}(traces.completion_tokens + excluded.completion_tokens, ${Number.MAX_SAFE_INTEGER}),
    total_tokens = ${min}(traces.total_tokens + excluded.total_tokens, ${Number.MAX_SAFE_INTEGER}),
    cost_usd = traces.cost_usd + excluded.cost_usd,
    session_id = coalesce(traces.session_id, excluded.session_id),
    version = coalesce(traces.version, excluded.version)`;
}

/** Told of the traces (32-hex ids) that gained spans, after the commit that stored them. */
export type TracesStoredListener = (projectId: string, traceHexes: readonly string[]) => void;

/** Stores spans and reads traces back. Every call is scoped to one project. */
export class SpanStore {
  private readonly insertSpan: StatementSync;
  private readonly upsertTrace: StatementSync;
  private readonly insertTags: StatementSync;
  private readonly insertModels: StatementSync;
  private readonly insertServices: StatementSync;
  private readonly selectTraceSpans: StatementSync;
  private readonly selectTraceSpansWithoutPayloads: StatementSync;
  private readonly selectSpan: StatementSync;
  private readonly logEvents: LogEventJoin;
  private readonly search: SpanSearchIndex;

  /**
   * @param writeLock shared by every thread that writes spans to the same file (the ingest
   *   workers), so that they take turns without SQLite's busy polling.
   * @param onTracesStored told of the traces each call changed (the project's live events).
   */
  constructor(
    private readonly db: DatabaseSync,
    private readonly writeLock: WriteLock = new WriteLock(),
    private readonly onTracesStored?: TracesStoredListener,
  ) {
    this.insertSpan = db.prepare(insertSpanSql);
    this.upsertTrace = db.prepare(`
      INSERT INTO traces (project_id, trace_id, root_span_id, name, kind, start_us, end_us,
        span_count, error_count, prompt_tokens, completion_tokens, total_tokens, cost_usd,
        session_id, version)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, trace_id) DO UPDATE SET ${addTraceDelta("min", "max")}`);
    // Each takes a trace's tags (models) as one JSON array: one statement per trace, not per tag.
    this.insertTags = db.prepare(
      "INSERT OR IGNORE INTO trace_tags (project_id, trace_id, tag) SELECT ?, ?, value FROM json_each(?)",
    );
    this.insertModels = db.prepare(
      "INSERT OR IGNORE INTO trace_models (project_id, trace_id, model) SELECT ?, ?, value FROM json_each(?)",
    );
    this.insertServices = db.prepare(
      "INSERT OR IGNORE INTO trace_services (project_id, trace_id, service_name) SELECT ?, ?, value FROM json_each(?)",
    );
    this.selectTraceSpans = db.prepare(
      "SELECT * FROM spans WHERE project_id = ? AND trace_id = ? ORDER BY start_us, span_id",
    );
    this.selectTraceSpansWithoutPayloads = db.prepare(
      `SELECT ${spanColumnsWithoutPayloads} FROM spans WHERE project_id = ? AND trace_id = ?
       ORDER BY start_us, span_id`,
    );
    this.selectSpan = db.prepare(
      "SELECT * FROM spans WHERE project_id = ? AND trace_id = ? AND span_id = ?",
    );
    this.search = new SpanSearchIndex(db);
    this.logEvents = new LogEventJoin(db);
  }

  /**
   * Stores a batch in one transaction. Idempotent on (trace_id, span_id): spans already
   * stored are counted as duplicates and change nothing, so a retried batch is harmless.
   */
  ingest(projectId: string, batch: ExportBatch): IngestResult {
    return this.ingestAll(projectId, [batch]);
  }

  /** Stores several batches (one per service, as OTLP sends them) in one transaction. */
  ingestAll(projectId: string, batches: readonly ExportBatch[]): IngestResult {
    const receivedAt = new Date().toISOString();
    // The values are computed before taking the lock: other writers wait only for the SQL.
    const spans: ExportedSpan[] = [];
    const rows: SQLInputValue[][] = [];
    for (const batch of batches) {
      for (const span of batch.spans) {
        spans.push(span);
        rows.push(spanRowValues(projectId, span, batch.resource, receivedAt));
      }
    }
    const traces = new Map<string, TraceDelta>();
    const store = () => {
      traces.clear();
      const stored: Array<{ traceId: string; spanId: string }> = [];
      for (let index = 0; index < rows.length; index++) {
        const values = rows[index] as SQLInputValue[];
        if (this.insertSpan.run(...values).changes === 0) continue;
        stored.push({ traceId: values[1] as string, spanId: values[2] as string });
        // start_us and end_us, as bound: the times are parsed once per span.
        const span = spans[index] as ExportedSpan;
        addToTrace(traces, span, values[6] as number, values[7] as number, values[25] as string);
      }
      for (const [traceId, delta] of traces) this.saveTrace(projectId, traceId, delta);
      // Log records (POST /v1/logs) often arrive before their span ends and is exported.
      this.logEvents.attachPending(projectId, stored);
      return { accepted: stored.length, duplicates: rows.length - stored.length };
    };
    const result = this.writeLock.run(() => transaction(this.db, store));
    if (traces.size > 0) this.onTracesStored?.(projectId, [...traces.keys()]);
    return result;
  }

  /**
   * Adds log events (OTLP log records) to their spans: merged into spans already stored, kept
   * waiting for the others (an hour at most). Returns how many spans were stored already.
   */
  attachLogEvents(projectId: string, spans: readonly SpanLogEvents[]): number {
    const nowMs = Date.now();
    return this.writeLock.run(() =>
      transaction(this.db, () => this.logEvents.attach(projectId, spans, nowMs)),
    );
  }

  /**
   * Adds up to `limit` stored spans to the search index, oldest first, in one transaction.
   * Returns how many; fewer than `limit` when none are left.
   */
  indexForSearch(limit: number): number {
    // Most calls find nothing waiting: they need not wait for the writers.
    if (!this.search.hasPending()) return 0;
    return this.writeLock.run(() => transaction(this.db, () => this.search.indexPending(limit)));
  }

  /** The spans of a trace, oldest first; empty when the project has no such trace. */
  traceSpans(projectId: string, traceHex: string): ExportedSpan[] {
    const rows = this.selectTraceSpans.all(projectId, traceHex) as unknown as SpanRow[];
    return rows.map(rowToSpan);
  }

  /**
   * The spans of a trace without input, output, expected output and large attribute values
   * (each span names what it left out in `omitted`): a large trace's tree stays small.
   */
  traceSpansWithoutPayloads(
    projectId: string,
    traceHex: string,
  ): Array<ExportedSpan & { omitted: Omitted }> {
    const rows = this.selectTraceSpansWithoutPayloads.all(
      projectId,
      traceHex,
    ) as unknown as RowWithoutPayloads[];
    return rows.map((row) => withoutLargeValues(rowToSpan(row), row));
  }

  /** One whole span, with its resource; undefined when the project has no such span. */
  span(projectId: string, traceHex: string, spanId: string): StoredSpan | undefined {
    const row = this.selectSpan.get(projectId, traceHex, spanId) as SpanRow | undefined;
    return row === undefined ? undefined : rowToSpan(row);
  }

  private saveTrace(projectId: string, traceId: string, delta: TraceDelta): void {
    this.upsertTrace.run(
      projectId,
      traceId,
      delta.rootSpanId,
      delta.name,
      delta.kind,
      delta.startUs,
      delta.endUs,
      delta.spans,
      delta.errors,
      delta.promptTokens,
      delta.completionTokens,
      delta.totalTokens,
      delta.costUsd,
      delta.sessionId,
      delta.version,
    );
    if (delta.tags.size > 0) {
      this.insertTags.run(projectId, traceId, JSON.stringify([...delta.tags]));
    }
    if (delta.models.size > 0) {
      this.insertModels.run(projectId, traceId, JSON.stringify([...delta.models]));
    }
    this.insertServices.run(projectId, traceId, JSON.stringify([...delta.services]));
  }
}

/** Adds a stored span to the delta of its trace (keyed by the trace's 32 hex digits). */
export function addToTrace(
  traces: Map<string, TraceDelta>,
  span: ExportedSpan,
  startUs: number,
  endUs: number,
  serviceName: string,
): void {
  const traceId = span.trace_id.slice(3);
  let delta = traces.get(traceId);
  if (delta === undefined) {
    delta = {
      rootSpanId: null,
      name: null,
      kind: null,
      startUs,
      endUs,
      spans: 0,
      errors: 0,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      costUsd: 0,
      sessionId: null,
      version: null,
      tags: new Set(),
      models: new Set(),
      services: new Set(),
    };
    traces.set(traceId, delta);
  }
  // The root of a Cairn trace has no parent, or a parent of the host app's (cairn.root).
  const isRoot = span.parent_span_id === null || span.attributes["cairn.root"] === true;
  if (isRoot && delta.rootSpanId === null) {
    delta.rootSpanId = span.span_id;
    delta.name = span.name;
    delta.kind = span.kind;
  }
  delta.startUs = Math.min(delta.startUs, startUs);
  delta.endUs = Math.max(delta.endUs, endUs);
  delta.spans++;
  if (span.status === "error") delta.errors++;
  // Only model calls count: an agent or chain that repeats its children's usage (the AI SDK's
  // invoke_agent and ai.generateText do) would count every token twice.
  if (countsUsage(span.kind)) {
    delta.promptTokens = tokenSum(delta.promptTokens, span.usage?.prompt_tokens);
    delta.completionTokens = tokenSum(delta.completionTokens, span.usage?.completion_tokens);
    delta.totalTokens = tokenSum(delta.totalTokens, span.usage?.total_tokens);
    delta.costUsd += span.cost_usd ?? 0;
  }
  delta.sessionId ??= span.session_id;
  delta.version ??= span.version;
  for (const tag of span.tags) delta.tags.add(tag);
  if (span.model !== null) delta.models.add(span.model);
  delta.services.add(serviceName);
}

/**
 * A trace's token sums stop at Number.MAX_SAFE_INTEGER: stored as integers, they must read back
 * as numbers (each span's counts are safe integers, and a trace may have any number of spans).
 */
function tokenSum(sum: number, tokens: number | undefined): number {
  return Math.min(sum + (tokens ?? 0), Number.MAX_SAFE_INTEGER);
}

/** Whether a span of this kind adds its usage and cost to trace, session and analytics totals. */
export function countsUsage(kind: string): boolean {
  return kind === "llm" || kind === "embedding";
}
