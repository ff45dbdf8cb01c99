import type { DatabaseSync } from "node:sqlite";
import { microsToIso } from "./span-rows.js";
import { matchingTracesSql, searchTerms } from "./trace-search.js";

export type TraceSort = "time" | "latency" | "cost";

export interface TraceFilters {
  /** Start of the period, inclusive, microseconds since the epoch. */
  readonly fromUs: number;
  /** End of the period, exclusive. */
  readonly toUs: number;
  readonly sessionId?: string | undefined;
  readonly tag?: string | undefined;
  readonly version?: string | undefined;
  readonly kind?: string | undefined;
  readonly status?: "ok" | "error" | undefined;
  readonly model?: string | undefined;
  readonly name?: string | undefined;
  /** Traces with at least one span from this service (`service.name`). */
  readonly service?: string | undefined;
  /** Text that a span's name, input, output or status message holds (trace-search.ts). */
  readonly search?: string | undefined;
  readonly sort: TraceSort;
  readonly order: "asc" | "desc";
  readonly limit: number;
  readonly cursor?: TraceCursor | undefined;
}

/** Where the previous page ended: the sort value and trace id of its last row. */
export interface TraceCursor {
  readonly value: number;
  readonly traceId: string;
}

export interface TraceSummary {
  trace_id: string;
  name: string | null;
  kind: string | null;
  root_span_id: string | null;
  start_time: string;
  end_time: string;
  duration_ms: number;
  status: "ok" | "error";
  span_count: number;
  error_count: number;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  cost_usd: number;
  session_id: string | null;
  version: string | null;
}

/** A trace as the list (and the live events) give it: the summary, its tags and models. */
export interface TraceListRow extends TraceSummary {
  tags: string[];
  models: string[];
}

/** A row of the traces table, with the value it is sorted by. */
export interface TraceRow {
  trace_id: string;
  root_span_id: string | null;
  name: string | null;
  kind: string | null;
  start_us: number;
  end_us: number;
  span_count: number;
  error_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  session_id: string | null;
  version: string | null;
  sort_value: number;
}

const sortExpressions: Readonly<Record<TraceSort, string>> = {
  time: "t.start_us",
  latency: "(t.end_us - t.start_us)",
  cost: "t.cost_usd",
};

/** One page of a project's traces, and the cursor of the next page (null on the last). */
export function listTraces(
  db: DatabaseSync,
  projectId: string,
  filters: TraceFilters,
): { traces: TraceListRow[]; next: TraceCursor | null } {
  const where = ["t.project_id = ?", "t.start_us >= ?", "t.start_us < ?"];
  const values: Array<string | number> = [projectId, filters.fromUs, filters.toUs];
  const equal = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(`${column} = ?`);
    values.push(value);
  };
  equal("t.session_id", filters.sessionId);
  equal("t.version", filters.version);
  equal("t.kind", filters.kind);
  equal("t.name", filters.name);
  if (filters.status !== undefined) {
    where.push(filters.status === "error" ? "t.error_count > 0" : "t.error_count = 0");
  }
  if (filters.tag !== undefined) {
    where.push(
      "EXISTS (SELECT 1 FROM trace_tags g WHERE g.project_id = t.project_id AND g.tag = ? AND g.trace_id = t.trace_id)",
    );
    values.push(filters.tag);
  }
  if (filters.model !== undefined) {
    where.push(
      "EXISTS (SELECT 1 FROM trace_models m WHERE m.project_id = t.project_id AND m.model = ? AND m.trace_id = t.trace_id)",
    );
    values.push(filters.model);
  }
  if (filters.service !== undefined) {
    where.push(
      "EXISTS (SELECT 1 FROM trace_services v WHERE v.project_id = t.project_id AND v.service_name = ? AND v.trace_id = t.trace_id)",
    );
    values.push(filters.service);
  }
  let from = "traces t";
  const fromValues: string[] = [];
  if (filters.search !== undefined) {
    const terms = searchTerms(filters.search);
    // Nothing searchable (only punctuation): no span can match.
    if (terms.length === 0) return { traces: [], next: null };
    // The matching traces first, each then looked up and filtered: a search that matches few
    // traces never reads the rest of the period.
    from = `${matchingTracesSql(terms.length)} m CROSS JOIN traces t ON t.trace_id = m.trace_id`;
    for (const term of terms) fromValues.push(term, projectId);
  }
  const sort = sortExpressions[filters.sort];
  const direction = filters.order === "asc" ? "ASC" : "DESC";
  if (filters.cursor !== undefined) {
    const after = filters.order === "asc" ? ">" : "<";
    where.push(`(${sort} ${after} ? OR (${sort} = ? AND t.trace_id ${after} ?))`);
    values.push(filters.cursor.value, filters.cursor.value, filters.cursor.traceId);
  }
  const order = `ORDER BY ${sort} ${direction}, t.trace_id ${direction}`;
  const page = `SELECT t.trace_id FROM traces t WHERE ${where.join(" AND ")} ${order} LIMIT ?`;
  // By time the index gives rows in order. By latency or cost every trace of the period is
  // sorted: do that on the index (trace ids only), then read just the rows of the page. A search
  // sorts the traces it matched.
  const direct = filters.sort === "time" || filters.search !== undefined;
  const sql = direct
    ? `SELECT t.*, ${sort} AS sort_value FROM ${from} WHERE ${where.join(" AND ")} ${order} LIMIT ?`
    : `SELECT t.*, ${sort} AS sort_value FROM traces t
         WHERE t.project_id = ? AND t.trace_id IN (${page}) ${order}`;
  const parameters = direct ? [...fromValues, ...values] : [projectId, ...values];
  const rows = db.prepare(sql).all(...parameters, filters.limit + 1) as unknown as TraceRow[];
  const shown = rows.slice(0, filters.limit);
  const last = shown[shown.length - 1];
  const next =
    rows.length > filters.limit && last !== undefined
      ? { value: last.sort_value, traceId: last.trace_id }
      : null;
  return { traces: withLabels(db, projectId, shown.map(toSummary)), next };
}

/** The summary of one trace with its tags and models, if the project has it. */
export function getTraceSummary(
  db: DatabaseSync,
  projectId: string,
  traceId: string,
): TraceListRow | undefined {
  const row = db
    .prepare("SELECT t.*, 0 AS sort_value FROM traces t WHERE project_id = ? AND trace_id = ?")
    .get(projectId, traceId) as TraceRow | undefined;
  return row === undefined ? undefined : withLabels(db, projectId, [toSummary(row)])[0];
}

/**
 * The summaries with the tags and models of each (every tag, every model of any of its spans,
 * sorted): two statements for a page, on the by-trace indexes of schema step 12.
 */
function withLabels(
  db: DatabaseSync,
  projectId: string,
  summaries: readonly TraceSummary[],
): TraceListRow[] {
  if (summaries.length === 0) return [];
  const ids = JSON.stringify(summaries.map((summary) => summary.trace_id.slice(3)));
  // Sorted by labelled(), not by ORDER BY: with it, SQLite (without ANALYZE's statistics) walks
  // the table's (project, label, trace) key through every label of the project to skip a sort
  // of a few rows — 18 ms instead of 0.1 on 200,000 tags, for any page or any trace.
  const labelsOf = (table: "trace_tags" | "trace_models", column: "tag" | "model") =>
    db
      .prepare(
        `SELECT trace_id, ${column} AS label FROM ${table}
         WHERE project_id = ? AND trace_id IN (SELECT value FROM json_each(?))`,
      )
      .all(projectId, ids) as unknown as TraceLabel[];
  return labelled(summaries, labelsOf("trace_tags", "tag"), labelsOf("trace_models", "model"));
}

/** A tag or model of a trace (32 hex digits), as the label tables hold it. */
export interface TraceLabel {
  trace_id: string;
  label: string;
}

/** The summaries with their tags and models (in any order here), each list sorted. */
export function labelled(
  summaries: readonly TraceSummary[],
  tags: readonly TraceLabel[],
  models: readonly TraceLabel[],
): TraceListRow[] {
  const rows = summaries.map((summary) => ({
    ...summary,
    tags: [] as string[],
    models: [] as string[],
  }));
  const byHex = new Map(rows.map((row) => [row.trace_id.slice(3), row]));
  for (const { trace_id, label } of tags) byHex.get(trace_id)?.tags.push(label);
  for (const { trace_id, label } of models) byHex.get(trace_id)?.models.push(label);
  for (const row of rows) {
    row.tags.sort();
    row.models.sort();
  }
  return rows;
}

/** A trace row as the API returns it. */
export function toSummary(row: TraceRow): TraceSummary {
  return {
    trace_id: `tr_${row.trace_id}`,
    name: row.name,
    kind: row.kind,
    root_span_id: row.root_span_id,
    start_time: microsToIso(row.start_us),
    end_time: microsToIso(row.end_us),
    duration_ms: (row.end_us - row.start_us) / 1000,
    status: row.error_count > 0 ? "error" : "ok",
    span_count: row.span_count,
    error_count: row.error_count,
    ...usageAndCost(row),
    session_id: row.session_id,
    version: row.version,
  };
}

/** The token and cost totals of a trace or session row, as the API returns them. */
export function usageAndCost(
  row: Pick<TraceRow, "prompt_tokens" | "completion_tokens" | "total_tokens" | "cost_usd">,
) {
  return {
    usage: {
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      total_tokens: row.total_tokens,
    },
    // Sums of floats: 0.1 + 0.2 is shown as 0.3.
    cost_usd: Math.round(row.cost_usd * 1e10) / 1e10,
  };
}
