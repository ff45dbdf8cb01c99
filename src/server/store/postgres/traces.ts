import { pageOf } from "../sessions.js";
import type { TraceQueries } from "../store.js";
import {
  labelled,
  type TraceCursor,
  type TraceFilters,
  type TraceLabel,
  type TraceListRow,
  type TraceRow,
  type TraceSort,
  toSummary,
} from "../trace-list.js";
import { searchCatchUpSpans, searchTermsOf } from "../trace-search.js";
import type { PostgresSql } from "./connection.js";
import { afterCursor, constant, type Fragment, joined, sortDirection } from "./query-fragments.js";
import { searchPatterns } from "./search-patterns.js";
import { hasSpansToIndex, indexSpansForSearch } from "./span-search-index.js";
import { storableText } from "./storable-values.js";

const sortExpressions: Readonly<Record<TraceSort, string>> = {
  time: "t.start_us",
  latency: "(t.end_us - t.start_us)",
  cost: "t.cost_usd",
};

/** Traces as lists and summaries on PostgreSQL, as trace-list.ts gives them on SQLite. */
export function postgresTraces(sql: PostgresSql): TraceQueries {
  return {
    list: (projectId, filters) => listTraces(sql, projectId, filters),
    async summary(projectId, traceHex) {
      const [row] = await sql<TraceRow[]>`
        SELECT t.*, 0 AS sort_value FROM traces t
        WHERE t.project_id = ${projectId} AND t.trace_id = ${storableText(traceHex)}`;
      return row === undefined ? undefined : (await withLabels(sql, projectId, [row]))[0];
    },
  };
}

/** One page of a project's traces, and the cursor of the next page (null on the last). */
async function listTraces(
  sql: PostgresSql,
  projectId: string,
  filters: TraceFilters,
): Promise<{ traces: TraceListRow[]; next: TraceCursor | null }> {
  const where: Fragment[] = [
    sql`t.project_id = ${projectId}`,
    sql`t.start_us >= ${Math.ceil(filters.fromUs)}`,
    sql`t.start_us < ${Math.ceil(filters.toUs)}`,
  ];
  const equal = (column: string, value: string | undefined) => {
    if (value !== undefined) where.push(sql`${constant(sql, column)} = ${storableText(value)}`);
  };
  equal("t.session_id", filters.sessionId);
  equal("t.version", filters.version);
  equal("t.kind", filters.kind);
  equal("t.name", filters.name);
  if (filters.status !== undefined) {
    where.push(filters.status === "error" ? sql`t.error_count > 0` : sql`t.error_count = 0`);
  }
  if (filters.tag !== undefined) {
    where.push(sql`EXISTS (SELECT 1 FROM trace_tags g WHERE g.project_id = t.project_id
      AND g.tag = ${storableText(filters.tag)} AND g.trace_id = t.trace_id)`);
  }
  if (filters.model !== undefined) {
    where.push(sql`EXISTS (SELECT 1 FROM trace_models m WHERE m.project_id = t.project_id
      AND m.model = ${storableText(filters.model)} AND m.trace_id = t.trace_id)`);
  }
  if (filters.service !== undefined) {
    where.push(sql`EXISTS (SELECT 1 FROM trace_services v WHERE v.project_id = t.project_id
      AND v.service_name = ${storableText(filters.service)} AND v.trace_id = t.trace_id)`);
  }
  let matched = sql``;
  if (filters.search !== undefined) {
    const terms = searchTermsOf(filters.search);
    // Nothing searchable (only punctuation): no span can match.
    if (terms.length === 0) return { traces: [], next: null };
    // Spans are indexed a moment after they are stored (span-search-index.ts): a search first
    // indexes what is left, so it finds what was just sent, as on SQLite.
    if (await hasSpansToIndex(sql)) await indexSpansForSearch(sql, searchCatchUpSpans);
    // Every term in some document of the trace (the traces that hold each, intersected); a
    // trace's spans (and so its documents) start within the period or after it.
    const holding = (await searchPatterns(sql, terms)).map(
      ({ pattern, likes }) => sql`SELECT d.trace_id FROM span_search_docs d
        WHERE d.project_id = ${projectId} AND d.start_us >= ${Math.ceil(filters.fromUs)}
          AND ${joined(
            sql,
            likes.map((like) => sql`d.text LIKE ${like}`),
          )} AND d.text ~ ${pattern}`,
    );
    // The traces found, once, before the traces are read: as a subquery, the planner (whose
    // statistics say "1 row" after a burst of ingest, until autovacuum analyzes) read the
    // documents again, patterns and all, for each trace of the period.
    matched = sql`WITH matched AS MATERIALIZED (
      ${holding.reduce((all, term) => sql`${all} INTERSECT ${term}`)})`;
    where.push(sql`t.trace_id IN (SELECT trace_id FROM matched)`);
  }
  const sort = constant(sql, sortExpressions[filters.sort]);
  const direction = sortDirection(sql, filters.order);
  if (filters.cursor !== undefined) {
    where.push(
      afterCursor(
        sql,
        filters.order,
        { expression: sort, integer: filters.sort !== "cost" },
        { value: filters.cursor.value, id: storableText(filters.cursor.traceId) },
        sql`t.trace_id`,
      ),
    );
  }
  const order = sql`ORDER BY ${sort} ${direction}, t.trace_id ${direction}`;
  const limit = filters.limit + 1;
  // By time the index gives rows in order. By latency or cost every trace of the period is
  // sorted: on the index alone (it holds end and cost), then just the page's rows are read.
  const rows =
    filters.sort === "time" || filters.search !== undefined
      ? await sql<TraceRow[]>`
          ${matched} SELECT t.*, ${sort} AS sort_value FROM traces t WHERE ${joined(sql, where)}
          ${order} LIMIT ${limit}`
      : await sql<TraceRow[]>`
          SELECT t.*, ${sort} AS sort_value FROM traces t
          WHERE t.project_id = ${projectId} AND t.trace_id IN (
            SELECT t.trace_id FROM traces t WHERE ${joined(sql, where)} ${order} LIMIT ${limit})
          ${order}`;
  const { shown, next } = pageOf(rows, filters.limit, (last) => ({
    value: last.sort_value,
    traceId: last.trace_id,
  }));
  return { traces: await withLabels(sql, projectId, shown), next };
}

/** The summaries of `rows` with their tags and models (trace-list.ts's labelled). */
async function withLabels(
  sql: PostgresSql,
  projectId: string,
  rows: readonly TraceRow[],
): Promise<TraceListRow[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.trace_id);
  const [tags, models] = await Promise.all([
    sql<TraceLabel[]>`SELECT trace_id, tag AS label FROM trace_tags
      WHERE project_id = ${projectId} AND trace_id = ANY(${ids}::text[])`,
    sql<TraceLabel[]>`SELECT trace_id, model AS label FROM trace_models
      WHERE project_id = ${projectId} AND trace_id = ANY(${ids}::text[])`,
  ]);
  return labelled(rows.map(toSummary), tags, models);
}
