import type { SessionSummary } from "../../../core/wire/sessions.js";
import {
  type EventSpanRow,
  pageOf,
  previewChars,
  type SessionCursor,
  type SessionFilters,
  type SessionRow,
  type SessionTraceRow,
  sessionEventsOf,
  type TurnRow,
  toSessionSummary,
  toSessionTrace,
} from "../sessions.js";
import type { SessionQueries } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { afterCursor, constant, type Fragment, joined } from "./query-fragments.js";
import { storableJson, storableText } from "./storable-values.js";

// Sessions on PostgreSQL, as sessions.ts reads them on SQLite. A trace's root span is read
// between the trace's start and end, so that only the day partitions that can hold it are read.

/** Whether a span is an event recorded outside any call (true or 1, as json_extract's 1). */
const isSessionEvent = (alias: string) =>
  `((${alias}.attributes -> 'cairn.session.event') IN ('true'::jsonb, '1'::jsonb))`;

const totals = `min(t.start_us) AS start_us, max(t.end_us) AS end_us, count(*) AS trace_count,
  sum(t.span_count) AS span_count, sum(t.error_count) AS error_count,
  sum(t.prompt_tokens) AS prompt_tokens, sum(t.completion_tokens) AS completion_tokens,
  sum(t.total_tokens) AS total_tokens, sum(t.cost_usd) AS cost_usd`;

/** The root span of trace `t`, if stored: r.attributes and its input and output. */
const rootSpan = `LEFT JOIN LATERAL (
    SELECT s.attributes, s.input, s.output FROM spans s
    WHERE s.project_id = t.project_id AND s.trace_id = t.trace_id AND s.span_id = t.root_span_id
      AND s.start_us >= t.start_us AND s.start_us <= t.end_us
    ORDER BY s.start_us LIMIT 1) r ON true`;

// A turn is a trace that is not an event recorded outside any call (its root span says so).
const turnDuration = `CASE WHEN ${isSessionEvent("r")} THEN NULL ELSE t.end_us - t.start_us END`;

export function postgresSessions(sql: PostgresSql): SessionQueries {
  /** Every tag of each session's traces, sorted (bytes, as SQLite's ORDER BY). */
  const sessionTags = async (projectId: string, sessionIds: readonly string[]) => {
    const bySession = new Map<string, string[]>();
    if (sessionIds.length === 0) return bySession;
    const rows = await sql<Array<{ session_id: string; tag: string }>>`
      SELECT DISTINCT t.session_id, g.tag FROM traces t
      JOIN trace_tags g ON g.project_id = t.project_id AND g.trace_id = t.trace_id
      WHERE t.project_id = ${projectId} AND t.session_id = ANY(${sessionIds}::text[])
      ORDER BY g.tag`;
    for (const row of rows)
      bySession.set(row.session_id, [...(bySession.get(row.session_id) ?? []), row.tag]);
    return bySession;
  };

  /** The turns of each session, read for the sessions of a page only. */
  const sessionTurns = async (projectId: string, sessionIds: readonly string[]) => {
    if (sessionIds.length === 0) return new Map<string, TurnRow>();
    const rows = await sql<Array<TurnRow & { turn_sum_us: number | null }>>`
      SELECT t.session_id, count(${constant(sql, turnDuration)}) AS turn_count,
        sum(${constant(sql, turnDuration)}) AS turn_sum_us,
        max(${constant(sql, turnDuration)}) AS turn_max_us
      FROM traces t ${constant(sql, rootSpan)}
      WHERE t.project_id = ${projectId} AND t.session_id = ANY(${sessionIds}::text[])
      GROUP BY t.session_id`;
    // The mean as SQLite's avg() gives it: the whole sum divided as a double.
    return new Map(
      rows.map(({ turn_sum_us, ...row }) => [
        row.session_id,
        { ...row, turn_mean_us: turn_sum_us === null ? null : turn_sum_us / row.turn_count },
      ]),
    );
  };

  const summaries = async (projectId: string, rows: readonly SessionRow[]) => {
    const ids = rows.map((row) => row.session_id);
    const [tags, turns] = await Promise.all([
      sessionTags(projectId, ids),
      sessionTurns(projectId, ids),
    ]);
    return rows.map((row) =>
      toSessionSummary(row, tags.get(row.session_id) ?? [], turns.get(row.session_id)),
    );
  };

  return {
    async list(projectId, filters: SessionFilters) {
      const where: Fragment[] = [sql`t.project_id = ${projectId}`, sql`t.session_id IS NOT NULL`];
      if (filters.tag !== undefined) {
        where.push(sql`t.session_id IN (SELECT s.session_id FROM trace_tags g
          JOIN traces s ON s.project_id = g.project_id AND s.trace_id = g.trace_id
          WHERE g.project_id = ${projectId} AND g.tag = ${storableText(filters.tag)})`);
      }
      const having: Fragment[] = [
        sql`bool_or(t.start_us >= ${Math.ceil(filters.fromUs)} AND t.start_us < ${Math.ceil(filters.toUs)})`,
      ];
      if (filters.cursor !== undefined) {
        having.push(cursorAfter(sql, filters.cursor));
      }
      const rows = await sql<SessionRow[]>`
        SELECT t.session_id, ${constant(sql, totals)} FROM traces t WHERE ${joined(sql, where)}
        GROUP BY t.session_id HAVING ${joined(sql, having)}
        ORDER BY max(t.end_us) DESC, t.session_id DESC LIMIT ${filters.limit + 1}`;
      const { shown, next } = pageOf(rows, filters.limit, (last) => ({
        value: last.end_us,
        sessionId: last.session_id,
      }));
      return { sessions: await summaries(projectId, shown), next };
    },

    async summary(projectId, sessionId): Promise<SessionSummary | undefined> {
      const rows = await sql<SessionRow[]>`
        SELECT t.session_id, ${constant(sql, totals)} FROM traces t
        WHERE t.project_id = ${projectId} AND t.session_id = ${storableText(sessionId)}
        GROUP BY t.session_id`;
      return rows.length === 0 ? undefined : (await summaries(projectId, rows))[0];
    },

    async traces(projectId, sessionId, page) {
      const after =
        page.cursor === undefined
          ? sql``
          : sql`AND ${afterCursor(
              sql,
              "asc",
              { expression: sql`t.start_us`, integer: true },
              { value: page.cursor.value, id: storableText(page.cursor.traceId) },
              sql`t.trace_id`,
            )}`;
      const rows = await sql<
        Array<Omit<SessionTraceRow, "session_event"> & { session_event: boolean | null }>
      >`
        SELECT t.*, t.start_us AS sort_value,
          left(r.input, ${previewChars}) AS input_preview, length(r.input) AS input_length,
          left(r.output, ${previewChars}) AS output_preview, length(r.output) AS output_length,
          ${constant(sql, isSessionEvent("r"))} AS session_event
        FROM traces t ${constant(sql, rootSpan)}
        WHERE t.project_id = ${projectId} AND t.session_id = ${storableText(sessionId)} ${after}
        ORDER BY t.start_us, t.trace_id LIMIT ${page.limit + 1}`;
      const { shown, next } = pageOf(rows, page.limit, (last) => ({
        value: last.start_us,
        traceId: last.trace_id,
      }));
      return {
        traces: shown.map((row) =>
          toSessionTrace({ ...row, session_event: row.session_event === true ? 1 : 0 }),
        ),
        next,
      };
    },

    async events(projectId, sessionId) {
      const id = storableText(sessionId);
      const carried = storableJson(JSON.stringify([{ attributes: { "session.id": sessionId } }]));
      const rows = await sql<Array<Omit<EventSpanRow, "standalone"> & { standalone: boolean }>>`
        SELECT s.trace_id, s.span_id, ${constant(sql, isSessionEvent("s"))} AS standalone, s.events
        FROM traces t
        JOIN spans s ON s.project_id = t.project_id AND s.trace_id = t.trace_id
          AND s.start_us >= t.start_us AND s.start_us <= t.end_us
        WHERE t.project_id = ${projectId} AND t.session_id = ${id}
          AND (${constant(sql, isSessionEvent("s"))} OR s.events @> ${carried}::jsonb)
        ORDER BY s.trace_id, s.span_id, s.start_us`;
      return sessionEventsOf(
        rows.map((row) => ({ ...row, standalone: row.standalone ? 1 : 0 })),
        id,
      );
    },
  };
}

/** Sessions after the cursor's: last active earlier, or as late with a smaller id. */
function cursorAfter(sql: PostgresSql, cursor: SessionCursor): Fragment {
  return afterCursor(
    sql,
    "desc",
    { expression: sql`max(t.end_us)`, integer: true },
    { value: cursor.value, id: storableText(cursor.sessionId) },
    sql`t.session_id`,
  );
}
