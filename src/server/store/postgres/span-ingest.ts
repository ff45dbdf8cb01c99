import type { SQLInputValue } from "node:sqlite";
import postgres from "postgres";
import type { ExportBatch, ExportedSpan } from "../../../core/wire/index.js";
import {
  addToTrace,
  addTraceDelta,
  type IngestResult,
  spanRowValues,
  type TraceDelta,
  type TracesStoredListener,
} from "../span-store.js";
import { type RollupSpan, updateAnalyticsRollups } from "./analytics.js";
import { arrayLiteral } from "./array-literal.js";
import type { PostgresSql } from "./connection.js";
import { attachPendingLogEvents, type StoredSpanKey, storingSpans } from "./log-event-join.js";
import { constant } from "./query-fragments.js";
import { inTransaction, type PostgresTransaction } from "./retried-transaction.js";
import { ensureSpanPartitions, spanDayOf } from "./span-partitions.js";
import { storableJson, storableText } from "./storable-values.js";
import type { TracesAnnouncer } from "./trace-notifications.js";

/** A span of a call and the values of its row (span-store.ts's spanRowValues). */
interface SpanToStore {
  readonly span: ExportedSpan;
  readonly values: SQLInputValue[];
  readonly key: string;
}

// The positions of spanRowValues' values (insertSpanSql's columns).
const at = {
  traceId: 1,
  spanId: 2,
  startUs: 6,
  endUs: 7,
  durationUs: 8,
  serviceName: 25,
} as const;
const traceUpdate = addTraceDelta("least", "greatest");

/** Positions of text that may hold a NUL (ids and JSON text cannot). */
const textAt = [3, 4, 5, 9, 10, 11, 12, 13, 14, 15, 16, 25, 29];
/** Positions of JSON that goes into jsonb: tags, attributes, events. */
const jsonbAt = [17, 19, 20];

/**
 * Stores the spans of `batches` in one transaction, as SpanStore.ingestAll does on SQLite: a
 * span already stored (the same trace id, span id and start) is a duplicate and changes
 * nothing; only the spans this call inserted add to their traces' summary rows and labels, and
 * take the log events that waited for them. Safe between instances: two calls storing the same
 * span at once store it once, and count it once. `announce` tells the other instances of the
 * traces inside the transaction (trace-notifications.ts); `onTracesStored` this one, after it.
 */
export async function ingestSpans(
  sql: PostgresSql,
  projectId: string,
  batches: readonly ExportBatch[],
  onTracesStored?: TracesStoredListener,
  announce?: TracesAnnouncer,
): Promise<IngestResult> {
  const receivedAt = new Date().toISOString();
  let sent = 0;
  // A span twice in one call is stored once, from its first copy, as on SQLite.
  const byKey = new Map<string, SpanToStore>();
  for (const batch of batches) {
    for (const span of batch.spans) {
      sent++;
      const key = `${span.trace_id}/${span.span_id}`;
      if (byKey.has(key)) continue;
      byKey.set(key, {
        span,
        values: spanRowValues(projectId, span, batch.resource, receivedAt),
        key,
      });
    }
  }
  const spans = [...byKey.values()];
  const columns = spanColumns(spans);
  const days = spans.map((each) => spanDayOf(each.values[at.startUs] as number));
  let traces = new Map<string, TraceDelta>();
  const store = () =>
    inTransaction(sql, async (transaction) => {
      // Waits for a call that keeps log events for spans not stored yet (log-event-join.ts),
      // then inserts: sent together, the server runs them in this order.
      const [logEventsWait, inserted] = await Promise.all([
        storingSpans(transaction, projectId),
        insertSpans(transaction, projectId, receivedAt, columns),
      ]);
      const stored = new Set(inserted.map((row) => `tr_${row.trace_id}/${row.span_id}`));
      traces = new Map();
      const keys: StoredSpanKey[] = [];
      const rollups: RollupSpan[] = [];
      for (const { span, values, key } of spans) {
        if (!stored.has(key)) continue;
        const startUs = values[at.startUs] as number;
        const serviceName = values[at.serviceName] as string;
        addToTrace(traces, span, startUs, values[at.endUs] as number, serviceName);
        keys.push({ traceId: values[at.traceId] as string, spanId: span.span_id, startUs });
        rollups.push({ span, startUs, durationUs: values[at.durationUs] as number, serviceName });
      }
      const saved = saveTraces(transaction, projectId, traces);
      if (logEventsWait) {
        await saved;
        // Log records (POST /v1/logs) often arrive before their span ends and is exported.
        await attachPendingLogEvents(transaction, projectId, keys);
      }
      // Last: every transaction locks spans, traces, then the analytics cells (analytics.ts).
      // Sent with the traces' statements when no log event waits, and with the NOTIFY (which
      // locks nothing until the commit): one round trip, run in the order sent.
      await Promise.all([
        saved,
        updateAnalyticsRollups(transaction, projectId, rollups),
        traces.size === 0 ? undefined : announce?.(transaction, projectId, [...traces.keys()]),
      ]);
      return stored.size;
    });
  await ensureSpanPartitions(sql, days);
  let accepted: number;
  try {
    accepted = await store();
  } catch (error) {
    // Another instance's retention dropped a day this pool had made: make it again.
    if (!(error instanceof postgres.PostgresError) || error.code !== "23514") throw error;
    await ensureSpanPartitions(sql, days, { recheck: true });
    accepted = await store();
  }
  if (traces.size > 0) onTracesStored?.(projectId, [...traces.keys()]);
  return { accepted, duplicates: sent - accepted };
}

/**
 * The values of each column but the project and the time received, as an array's text
 * (arrayLiteral), in the order of the spans' keys: every call inserts (and so waits for the
 * same keys) in one order, so that two calls storing the same spans never deadlock.
 */
function spanColumns(spans: readonly SpanToStore[]): (index: number) => string {
  const sorted = [...spans].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const columns = Array.from({ length: 33 }, (_, index) =>
    sorted.map(({ values }) => values[index] as string | number | null),
  );
  for (const index of textAt) {
    columns[index] = (columns[index] as Array<string | null>).map(storableText);
  }
  for (const index of jsonbAt) columns[index] = (columns[index] as string[]).map(storableJson);
  const literals = columns.map(arrayLiteral);
  return (index) => literals[index] as string;
}

async function insertSpans(
  transaction: PostgresTransaction,
  projectId: string,
  receivedAt: string,
  c: (index: number) => string,
): Promise<Array<{ trace_id: string; span_id: string }>> {
  return await transaction<Array<{ trace_id: string; span_id: string }>>`
    INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us,
      end_us, duration_us, status, status_message, input, output, expected_output, model,
      session_id, version, tags, metadata, attributes, events, prompt_tokens,
      completion_tokens, total_tokens, cost_usd, service_name, received_at, cached_tokens,
      reasoning_tokens, span_kind, scope, links, resource)
    SELECT ${projectId}, trace_id, span_id, parent_span_id, name, kind, start_us, end_us,
      duration_us, status, status_message, input, output, expected_output, model, session_id,
      version, tags, metadata, attributes, events, prompt_tokens, completion_tokens,
      total_tokens, cost_usd, service_name, ${receivedAt}, cached_tokens, reasoning_tokens,
      span_kind, scope, links, resource
    FROM unnest(${c(1)}::text[], ${c(2)}::text[], ${c(3)}::text[], ${c(4)}::text[],
      ${c(5)}::text[], ${c(6)}::int8[], ${c(7)}::int8[], ${c(8)}::int8[], ${c(9)}::text[],
      ${c(10)}::text[], ${c(11)}::text[], ${c(12)}::text[], ${c(13)}::text[], ${c(14)}::text[],
      ${c(15)}::text[], ${c(16)}::text[], ${c(17)}::jsonb[], ${c(18)}::text[], ${c(19)}::jsonb[],
      ${c(20)}::jsonb[], ${c(21)}::int8[], ${c(22)}::int8[], ${c(23)}::int8[], ${c(24)}::float8[],
      ${c(25)}::text[], ${c(27)}::int8[], ${c(28)}::int8[], ${c(29)}::text[], ${c(30)}::text[],
      ${c(31)}::text[], ${c(32)}::text[])
      WITH ORDINALITY AS s (trace_id, span_id, parent_span_id, name, kind, start_us, end_us,
        duration_us, status, status_message, input, output, expected_output, model, session_id,
        version, tags, metadata, attributes, events, prompt_tokens, completion_tokens,
        total_tokens, cost_usd, service_name, cached_tokens, reasoning_tokens, span_kind, scope,
        links, resource, position)
    ORDER BY position
    ON CONFLICT DO NOTHING
    RETURNING trace_id, span_id`;
}

/**
 * Adds each trace's delta to its summary row (made by the first spans of a trace) and its new
 * tags, models and services to the label tables, trace by trace in the order of their ids.
 */
async function saveTraces(
  transaction: PostgresTransaction,
  projectId: string,
  traces: ReadonlyMap<string, TraceDelta>,
): Promise<void> {
  if (traces.size === 0) return;
  const ids = [...traces.keys()].sort();
  const deltas = ids.map((id) => traces.get(id) as TraceDelta);
  const column = <T>(of: (delta: TraceDelta) => T) => deltas.map(of);
  const text = (of: (delta: TraceDelta) => string | null) =>
    column((delta) => storableText(of(delta)));
  const summaries = transaction`
    INSERT INTO traces (project_id, trace_id, root_span_id, name, kind, start_us, end_us,
      span_count, error_count, prompt_tokens, completion_tokens, total_tokens, cost_usd,
      session_id, version)
    SELECT ${projectId}, * FROM unnest(${ids}::text[], ${text((d) => d.rootSpanId)}::text[],
      ${text((d) => d.name)}::text[], ${text((d) => d.kind)}::text[],
      ${column((d) => d.startUs)}::int8[], ${column((d) => d.endUs)}::int8[],
      ${column((d) => d.spans)}::int8[], ${column((d) => d.errors)}::int8[],
      ${column((d) => d.promptTokens)}::int8[], ${column((d) => d.completionTokens)}::int8[],
      ${column((d) => d.totalTokens)}::int8[], ${column((d) => d.costUsd)}::float8[],
      ${text((d) => d.sessionId)}::text[], ${text((d) => d.version)}::text[])
    ON CONFLICT (project_id, trace_id) DO UPDATE SET ${constant(transaction, traceUpdate)}`;
  const labels = (of: (delta: TraceDelta) => ReadonlySet<string>) => {
    const rows: Array<[string, string]> = [];
    ids.forEach((id, index) => {
      for (const label of of(deltas[index] as TraceDelta)) rows.push([storableText(label), id]);
    });
    // In the order of the table's key (label, trace), the same in every call.
    rows.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
    return [rows.map((row) => row[0]), rows.map((row) => row[1])] as const;
  };
  const [tags, tagTraces] = labels((delta) => delta.tags);
  const [models, modelTraces] = labels((delta) => delta.models);
  const [services, serviceTraces] = labels((delta) => delta.services);
  // Sent together (the server runs them in this order): one round trip, not four.
  await Promise.all([
    summaries,
    tags.length === 0
      ? undefined
      : transaction`INSERT INTO trace_tags (project_id, tag, trace_id)
          SELECT ${projectId}, * FROM unnest(${tags}::text[], ${tagTraces}::text[])
          ON CONFLICT DO NOTHING`,
    models.length === 0
      ? undefined
      : transaction`INSERT INTO trace_models (project_id, model, trace_id)
          SELECT ${projectId}, * FROM unnest(${models}::text[], ${modelTraces}::text[])
          ON CONFLICT DO NOTHING`,
    transaction`INSERT INTO trace_services (project_id, service_name, trace_id)
      SELECT ${projectId}, * FROM unnest(${services}::text[], ${serviceTraces}::text[])
      ON CONFLICT DO NOTHING`,
  ]);
}
