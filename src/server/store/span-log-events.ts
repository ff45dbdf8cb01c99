import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { ExportedSpanEvent } from "../../core/wire/index.js";
import type { SpanLogEvents } from "../ingest/otlp/logs/log-record.js";
import { mergeLogEvents } from "../ingest/otlp/logs/merge-log-events.js";
import { SpanSearchIndex } from "./span-search-index.js";

/** How long a log event waits for its span before it is dropped. */
export const pendingLogEventMaxAgeMs = 60 * 60 * 1000;
/** The most log events kept waiting for their spans, across projects; the oldest go first. */
export const maxPendingLogEvents = 100_000;

/**
 * Joins OTLP log records to their spans, whichever arrives first: events for a stored span
 * are merged into its row at once; the others wait in `pending_log_events` (schema step 8)
 * until the span is stored, for at most an hour. Every call runs inside the caller's
 * transaction.
 */
export class LogEventJoin {
  private readonly selectSpan: StatementSync;
  private readonly updateSpan: StatementSync;
  private readonly anyPending: StatementSync;
  private readonly selectPending: StatementSync;
  private readonly deletePending: StatementSync;
  private readonly insertPending: StatementSync;
  private readonly pruneOld: StatementSync;
  private readonly pruneOverflow: StatementSync;

  /** Indexes a span again when its events fill its input or output. */
  private readonly search: SpanSearchIndex;

  /** @param maxPending the most events kept waiting; a test lowers it. */
  constructor(
    db: DatabaseSync,
    private readonly maxPending = maxPendingLogEvents,
  ) {
    this.search = new SpanSearchIndex(db);
    const span = "project_id = ? AND trace_id = ? AND span_id = ?";
    this.selectSpan = db.prepare(`SELECT rowid, events, input, output FROM spans WHERE ${span}`);
    this.updateSpan = db.prepare(
      `UPDATE spans SET events = ?, input = ?, output = ? WHERE ${span}`,
    );
    this.anyPending = db.prepare("SELECT 1 FROM pending_log_events WHERE project_id = ? LIMIT 1");
    this.selectPending = db.prepare(
      `SELECT event FROM pending_log_events WHERE ${span} ORDER BY id`,
    );
    this.deletePending = db.prepare(`DELETE FROM pending_log_events WHERE ${span}`);
    this.insertPending = db.prepare(
      "INSERT INTO pending_log_events (project_id, trace_id, span_id, received_ms, event) VALUES (?, ?, ?, ?, ?)",
    );
    this.pruneOld = db.prepare("DELETE FROM pending_log_events WHERE received_ms < ?");
    this.pruneOverflow = db.prepare(`
      DELETE FROM pending_log_events WHERE id <= (
        SELECT id FROM pending_log_events ORDER BY id DESC LIMIT 1 OFFSET ?)`);
  }

  /**
   * Merges each span's log events into the span when it is stored, and keeps the rest
   * waiting. Returns how many spans were stored already.
   */
  attach(projectId: string, spans: readonly SpanLogEvents[], nowMs: number): number {
    this.pruneOld.run(nowMs - pendingLogEventMaxAgeMs);
    let merged = 0;
    for (const { traceId, spanId, events } of spans) {
      if (this.merge(projectId, traceId, spanId, events)) {
        merged++;
        continue;
      }
      for (const event of events) {
        this.insertPending.run(projectId, traceId, spanId, nowMs, JSON.stringify(event));
      }
    }
    this.pruneOverflow.run(this.maxPending);
    return merged;
  }

  /** Merges the waiting log events of spans just stored into them. */
  attachPending(projectId: string, spans: ReadonlyArray<{ traceId: string; spanId: string }>) {
    if (spans.length === 0 || this.anyPending.get(projectId) === undefined) return;
    for (const { traceId, spanId } of spans) {
      const rows = this.selectPending.all(projectId, traceId, spanId) as Array<{ event: string }>;
      if (rows.length === 0) continue;
      const events = rows.map((row) => JSON.parse(row.event) as ExportedSpanEvent);
      this.merge(projectId, traceId, spanId, events);
      this.deletePending.run(projectId, traceId, spanId);
    }
  }

  private merge(
    projectId: string,
    traceId: string,
    spanId: string,
    events: readonly ExportedSpanEvent[],
  ): boolean {
    const row = this.selectSpan.get(projectId, traceId, spanId) as
      | { rowid: number; events: string; input: string | null; output: string | null }
      | undefined;
    if (row === undefined) return false;
    const stored = JSON.parse(row.events) as ExportedSpanEvent[];
    const merged = mergeLogEvents({ events: stored, input: row.input, output: row.output }, events);
    if (merged.events !== stored) {
      this.updateSpan.run(
        JSON.stringify(merged.events),
        merged.input,
        merged.output,
        projectId,
        traceId,
        spanId,
      );
      if (merged.input !== row.input || merged.output !== row.output) {
        this.search.spanChanged(row.rowid);
      }
    }
    return true;
  }
}
