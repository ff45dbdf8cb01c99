import { ApiError } from "../../http/api-error.js";
import {
  type RowWithoutPayloads,
  spanColumnsWithoutPayloads,
  withoutLargeValues,
} from "../span-payloads.js";
import { rowToSpan, type SpanRow } from "../span-rows.js";
import type { TracesStoredListener } from "../span-store.js";
import type { SpanRepository } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { attachLogEvents } from "./log-event-join.js";
import { ingestSpans } from "./span-ingest.js";
import { storableText } from "./storable-values.js";
import type { TracesAnnouncer } from "./trace-notifications.js";

/**
 * Spans on PostgreSQL, as SpanStore keeps them on SQLite. A trace's spans are read between its
 * start and end (its summary row's), so that only the day partitions that hold them are read.
 *
 * @param onTracesStored told of the traces each ingest changed, after its commit (the
 *   project's live events on this instance).
 * @param announce told of them inside the ingest's transaction (the other instances' events).
 */
export function postgresSpans(
  sql: PostgresSql,
  onTracesStored?: TracesStoredListener,
  announce?: TracesAnnouncer,
): SpanRepository {
  // Bounds of a trace's spans: each starts within its trace's start and end.
  const within = (projectId: string, traceHex: string) => sql`
    project_id = ${projectId} AND trace_id = ${traceHex}
    AND start_us >= (SELECT start_us FROM traces WHERE project_id = ${projectId} AND trace_id = ${traceHex})
    AND start_us <= (SELECT end_us FROM traces WHERE project_id = ${projectId} AND trace_id = ${traceHex})`;
  return {
    ingest: (projectId, batch) =>
      ingestSpans(sql, projectId, [batch], onTracesStored, announce).catch(refuseOversizedLabels),
    ingestAll: (projectId, batches) =>
      ingestSpans(sql, projectId, batches, onTracesStored, announce).catch(refuseOversizedLabels),
    attachLogEvents: (projectId, spans) => attachLogEvents(sql, projectId, spans),
    async traceSpans(projectId, traceHex) {
      const rows = await sql<SpanRow[]>`
        SELECT * FROM spans WHERE ${within(projectId, storableText(traceHex))}
        ORDER BY start_us, span_id`;
      return rows.map(rowToSpan);
    },
    async traceSpansWithoutPayloads(projectId, traceHex) {
      const rows = await sql<RowWithoutPayloads[]>`
        SELECT ${sql.unsafe(spanColumnsWithoutPayloads)} FROM spans
        WHERE ${within(projectId, storableText(traceHex))}
        ORDER BY start_us, span_id`;
      return rows.map((row) => withoutLargeValues(rowToSpan(row), row));
    },
    async span(projectId, traceHex, spanId) {
      const [row] = await sql<SpanRow[]>`
        SELECT * FROM spans
        WHERE ${within(projectId, storableText(traceHex))} AND span_id = ${storableText(spanId)}
        ORDER BY start_us LIMIT 1`;
      return row === undefined ? undefined : rowToSpan(row);
    },
  };
}

/**
 * A tag, model, session id or service name too long for a B-tree key (about 2,700 bytes, where
 * SQLite has no limit) is the batch's fault: 400 naming what to shorten, not a 500. Nothing of
 * the batch is stored (its transaction is rolled back).
 */
function refuseOversizedLabels(error: unknown): never {
  if ((error as { code?: unknown }).code === "54000") {
    throw new ApiError(
      "invalid_request",
      "a tag, model, session id or service name of this batch is longer than the PostgreSQL store keeps in an index (about 2,700 bytes); shorten it",
    );
  }
  throw error;
}
