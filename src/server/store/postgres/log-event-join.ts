import type { ExportedSpanEvent } from "../../../core/wire/index.js";
import type { SpanLogEvents } from "../../ingest/otlp/logs/log-record.js";
import { mergeLogEvents, type SpanContent } from "../../ingest/otlp/logs/merge-log-events.js";
import { maxPendingLogEvents, pendingLogEventMaxAgeMs } from "../span-log-events.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction, type PostgresTransaction } from "./retried-transaction.js";
import { canonicalJsonValue, storableJson, storableText } from "./storable-values.js";

// OTLP log records joined to their spans, whichever arrives first, as span-log-events.ts does on
// SQLite: events for a stored span are merged into its row at once, the others wait in
// pending_log_events (an hour at most) until the span is stored.
//
// Between instances, a span stored at the moment its log events are put to wait must still get
// them: the transaction that stores the span would not see events kept after it looked, and the
// one that keeps them would not see a span not committed yet. So keeping events waits for, and
// holds off, the transactions that store spans of the project (a lock of the project's, which
// storing spans takes shared): whichever comes second sees the other's work.

/** A stored span's row key: spans are keyed by their start too (span-partitions.ts). */
export interface StoredSpanKey {
  readonly traceId: string;
  readonly spanId: string;
  readonly startUs: number;
}

interface SpanContentRow {
  trace_id: string;
  span_id: string;
  start_us: number;
  events: string;
  input: string | null;
  output: string | null;
}

/** A span whose events (input, output) log events changed. */
interface MergedSpan {
  readonly row: SpanContentRow;
  readonly content: SpanContent;
}

/**
 * Taken by every transaction that stores spans of the project, before it does. Returns whether
 * log events of the project wait for their spans: none can be kept from here to the commit, so
 * when none wait, {@link attachPendingLogEvents} has nothing to do. Two statements sent at once
 * (the second, after the lock, sees what committed while it waited).
 */
export async function storingSpans(
  transaction: PostgresTransaction,
  projectId: string,
): Promise<boolean> {
  const [, [any]] = await Promise.all([
    transaction`SELECT pg_advisory_xact_lock_shared(hashtextextended(${lockName(projectId)}, 0))`,
    transaction<Array<{ waiting: boolean }>>`
      SELECT EXISTS (SELECT 1 FROM pending_log_events WHERE project_id = ${projectId}) AS waiting`,
  ]);
  return any?.waiting === true;
}

/**
 * Merges the log events that waited for spans this transaction just stored into them, and
 * removes them from those waiting. Runs after {@link storingSpans}, when it found some waiting.
 */
export async function attachPendingLogEvents(
  transaction: PostgresTransaction,
  projectId: string,
  spans: readonly StoredSpanKey[],
): Promise<void> {
  if (spans.length === 0) return;
  const waiting = await transaction<
    Array<{ id: number; trace_id: string; span_id: string; event: string }>
  >`
    DELETE FROM pending_log_events p
    USING unnest(${spans.map((span) => span.traceId)}::text[],
      ${spans.map((span) => span.spanId)}::text[]) AS k (trace_id, span_id)
    WHERE p.project_id = ${projectId} AND p.trace_id = k.trace_id AND p.span_id = k.span_id
    RETURNING p.id, p.trace_id, p.span_id, p.event`;
  if (waiting.length === 0) return;
  const events = new Map<string, ExportedSpanEvent[]>();
  for (const row of waiting.sort((a, b) => a.id - b.id)) {
    const key = `${row.trace_id}/${row.span_id}`;
    events.set(key, [...(events.get(key) ?? []), JSON.parse(row.event) as ExportedSpanEvent]);
  }
  const keys = spans.filter((span) => events.has(`${span.traceId}/${span.spanId}`));
  const rows = await transaction<SpanContentRow[]>`
    SELECT s.trace_id, s.span_id, s.start_us, s.events, s.input, s.output
    FROM unnest(${keys.map((key) => key.traceId)}::text[], ${keys.map((key) => key.spanId)}::text[],
      ${keys.map((key) => key.startUs)}::int8[]) AS k (trace_id, span_id, start_us)
    JOIN spans s ON s.project_id = ${projectId} AND s.trace_id = k.trace_id
      AND s.span_id = k.span_id AND s.start_us = k.start_us`;
  const merged = rows.map((row) =>
    mergedSpan(row, [events.get(`${row.trace_id}/${row.span_id}`) ?? []]),
  );
  await updateSpans(transaction, projectId, merged);
}

/**
 * Adds log events to their spans: merged into spans already stored, kept waiting for the
 * others (an hour at most, {@link maxPendingLogEvents} at most across projects). Returns how
 * many of `spans` were stored already.
 */
export function attachLogEvents(
  sql: PostgresSql,
  projectId: string,
  spans: readonly SpanLogEvents[],
  maxPending = maxPendingLogEvents,
): Promise<number> {
  const nowMs = Date.now();
  const keyOf = (span: SpanLogEvents) =>
    `${storableText(span.traceId)}/${storableText(span.spanId)}`;
  const keys = [...new Set(spans.map(keyOf))].sort();
  return inTransaction(sql, async (transaction) => {
    const found = await spanContents(transaction, projectId, keys);
    const missing = keys.filter((key) => !found.has(key));
    if (missing.length > 0) {
      // From here to the commit no transaction stores spans of the project, and those that
      // did have committed: a span not found now is not stored, and its events wait for it.
      await transaction`SELECT pg_advisory_xact_lock(hashtextextended(${lockName(projectId)}, 0))`;
      for (const [key, rows] of await spanContents(transaction, projectId, missing)) {
        found.set(key, rows);
      }
    }
    const added = new Map<string, Array<readonly ExportedSpanEvent[]>>();
    const waiting: Array<{ span: SpanLogEvents; event: ExportedSpanEvent }> = [];
    let stored = 0;
    for (const span of spans) {
      const key = keyOf(span);
      if (found.has(key)) {
        stored++;
        added.set(key, [...(added.get(key) ?? []), span.events]);
      } else {
        for (const event of span.events) waiting.push({ span, event });
      }
    }
    const merged = [...found].flatMap(([key, rows]) =>
      rows.map((row) => mergedSpan(row, added.get(key) ?? [])),
    );
    await updateSpans(transaction, projectId, merged);
    if (waiting.length > 0) {
      await transaction`
        INSERT INTO pending_log_events (project_id, trace_id, span_id, received_ms, event)
        SELECT ${projectId}, trace_id, span_id, ${nowMs}, event FROM unnest(
          ${waiting.map(({ span }) => storableText(span.traceId))}::text[],
          ${waiting.map(({ span }) => storableText(span.spanId))}::text[],
          ${waiting.map(({ event }) => JSON.stringify(event))}::text[])
          WITH ORDINALITY AS e (trace_id, span_id, event, position)
        ORDER BY position`;
    }
    await transaction`
      DELETE FROM pending_log_events WHERE received_ms < ${nowMs - pendingLogEventMaxAgeMs}`;
    await transaction`
      DELETE FROM pending_log_events WHERE id <= (
        SELECT id FROM pending_log_events ORDER BY id DESC LIMIT 1 OFFSET ${maxPending})`;
    return stored;
  });
}

function lockName(projectId: string): string {
  return `cairn pending_log_events ${projectId}`;
}

/**
 * The rows of the spans `keys` name (trace id/span id), locked, in the order of their keys:
 * the start of each is looked for between its trace's start and end, so only those days'
 * partitions are read.
 */
async function spanContents(
  transaction: PostgresTransaction,
  projectId: string,
  keys: readonly string[],
): Promise<Map<string, SpanContentRow[]>> {
  const found = new Map<string, SpanContentRow[]>();
  if (keys.length === 0) return found;
  const pairs = keys.map((key) => key.split("/") as [string, string]);
  const rows = await transaction<SpanContentRow[]>`
    SELECT s.trace_id, s.span_id, s.start_us, s.events, s.input, s.output
    FROM unnest(${pairs.map((pair) => pair[0])}::text[], ${pairs.map((pair) => pair[1])}::text[])
      AS k (trace_id, span_id)
    JOIN traces t ON t.project_id = ${projectId} AND t.trace_id = k.trace_id
    JOIN spans s ON s.project_id = ${projectId} AND s.trace_id = k.trace_id
      AND s.span_id = k.span_id AND s.start_us BETWEEN t.start_us AND t.end_us
    ORDER BY s.trace_id, s.span_id, s.start_us
    FOR UPDATE OF s`;
  for (const row of rows) {
    const key = `${row.trace_id}/${row.span_id}`;
    found.set(key, [...(found.get(key) ?? []), row]);
  }
  return found;
}

/**
 * The span with each list of events merged in turn (mergeLogEvents), or undefined when that
 * changes nothing. Both sides are compared in one key order, since jsonb keeps none.
 */
function mergedSpan(
  row: SpanContentRow,
  added: ReadonlyArray<readonly ExportedSpanEvent[]>,
): MergedSpan | undefined {
  const events = canonicalJsonValue(JSON.parse(row.events)) as ExportedSpanEvent[];
  let content: SpanContent = { events, input: row.input, output: row.output };
  for (const more of added) {
    content = mergeLogEvents(content, canonicalJsonValue(more) as ExportedSpanEvent[]);
  }
  return content.events === events ? undefined : { row, content };
}

async function updateSpans(
  transaction: PostgresTransaction,
  projectId: string,
  merged: ReadonlyArray<MergedSpan | undefined>,
): Promise<void> {
  const changed = merged.filter((span) => span !== undefined);
  if (changed.length === 0) return;
  await transaction`
    UPDATE spans s SET events = u.events, input = u.input, output = u.output
    FROM unnest(${changed.map(({ row }) => row.trace_id)}::text[],
      ${changed.map(({ row }) => row.span_id)}::text[],
      ${changed.map(({ row }) => row.start_us)}::int8[],
      ${changed.map(({ content }) => storableJson(JSON.stringify(content.events)))}::jsonb[],
      ${changed.map(({ content }) => storableText(content.input))}::text[],
      ${changed.map(({ content }) => storableText(content.output))}::text[])
      AS u (trace_id, span_id, start_us, events, input, output)
    WHERE s.project_id = ${projectId} AND s.trace_id = u.trace_id AND s.span_id = u.span_id
      AND s.start_us = u.start_us`;
}
