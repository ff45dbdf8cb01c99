import type { PostgresSql } from "./connection.js";

/**
 * Indexes up to `limit` of the spans waiting in span_search_pending (the spans table's triggers
 * queue each span stored, and each whose text changed), oldest first, and returns how many it
 * took; fewer than `limit` when none are left. The spans of each trace among them become one
 * document of span_search_docs (initial-schema.ts says what the text holds and how a search
 * reads it). One statement: what it takes is indexed, or left waiting if it fails.
 *
 * Instances may run it at once: each takes rows the others have not locked (SKIP LOCKED), so a
 * span is indexed once. A span dropped by retention before its turn is taken and skipped.
 * Call it off the ingest path, as the SQLite store's SearchIndexer does (chunks of about
 * 2,000 while {@link hasSpansToIndex}).
 */
export async function indexSpansForSearch(sql: PostgresSql, limit: number): Promise<number> {
  const [row] = await sql<Array<{ taken: number }>>`
    WITH taken AS (
      DELETE FROM span_search_pending WHERE id IN (
        SELECT id FROM span_search_pending ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING project_id, trace_id, span_id, start_us),
    documents AS (
      INSERT INTO span_search_docs (project_id, trace_id, start_us, text)
      SELECT s.project_id, s.trace_id, min(s.start_us),
        string_agg(cairn_span_search_text(s.name, s.input, s.output, s.status_message), E'\n'
          ORDER BY s.start_us, s.span_id)
      FROM (SELECT DISTINCT project_id, trace_id, span_id, start_us FROM taken) t
      JOIN spans s ON s.project_id = t.project_id AND s.trace_id = t.trace_id
        AND s.span_id = t.span_id AND s.start_us = t.start_us
      GROUP BY s.project_id, s.trace_id
      RETURNING 1)
    SELECT (SELECT count(*) FROM taken) AS taken, (SELECT count(*) FROM documents) AS documents`;
  return row?.taken ?? 0;
}

/** Whether any span waits to be indexed for search. */
export async function hasSpansToIndex(sql: PostgresSql): Promise<boolean> {
  const [row] = await sql<Array<{ waiting: boolean }>>`
    SELECT EXISTS (SELECT 1 FROM span_search_pending) AS waiting`;
  return row?.waiting === true;
}
