import type { DatabaseSync } from "node:sqlite";
import type { SessionEvent, SessionSummary } from "../../core/wire/sessions.js";
import { microsToIso } from "./span-rows.js";
import { type TraceRow, type TraceSummary, toSummary, usageAndCost } from "./trace-list.js";

/** A trace of a session, with its root span's input and output cut to {@link previewChars}. */
export interface SessionTrace extends TraceSummary {
  input: string | null;
  output: string | null;
  session_event: boolean;
}

export interface SessionFilters {
  /** Sessions with a trace that started in the period: from, inclusive, in microseconds. */
  readonly fromUs: number;
  /** End of the period, exclusive. */
  readonly toUs: number;
  /** Sessions with a trace that has this tag. */
  readonly tag?: string | undefined;
  readonly limit: number;
  readonly cursor?: SessionCursor | undefined;
}

/** Where the previous page ended: the last span end and the id of its last session. */
export interface SessionCursor {
  readonly value: number;
  readonly sessionId: string;
}

/** Where the previous page of a session's traces ended: its last trace's start and id. */
export interface SessionTraceCursor {
  readonly value: number;
  readonly traceId: string;
}

/** The sums over a session's trace rows. */
export type SessionRow = Pick<
  TraceRow,
  | "start_us"
  | "end_us"
  | "span_count"
  | "error_count"
  | "prompt_tokens"
  | "completion_tokens"
  | "total_tokens"
  | "cost_usd"
> & { session_id: string; trace_count: number };

/** A session's turns: how many, and their mean and longest duration. */
export interface TurnRow {
  session_id: string;
  turn_count: number;
  turn_mean_us: number | null;
  turn_max_us: number | null;
}

/** A trace of a session with its root span's input and output, cut, and whether it is an event. */
export interface SessionTraceRow extends TraceRow {
  input_preview: string | null;
  input_length: number | null;
  output_preview: string | null;
  output_length: number | null;
  session_event: number | null;
}

/** A span that carries events of a session: its own (standalone 1), or among a call's. */
export interface EventSpanRow {
  trace_id: string;
  span_id: string;
  standalone: number | null;
  events: string;
}

/** Characters of a root span's input (output) a session's trace shows. */
export const previewChars = 2000;
/** Events a session's answer carries at most. */
export const maxSessionEvents = 1000;

const sessionEventAttribute = `json_extract(s.attributes, '$."cairn.session.event"')`;

const totals = `min(t.start_us) AS start_us, max(t.end_us) AS end_us, count(*) AS trace_count,
  sum(t.span_count) AS span_count, sum(t.error_count) AS error_count,
  total(t.prompt_tokens) AS prompt_tokens, total(t.completion_tokens) AS completion_tokens,
  total(t.total_tokens) AS total_tokens, sum(t.cost_usd) AS cost_usd`;

// A turn is a trace that is not an event recorded outside any call (its root span says so).
const turnDuration = `CASE WHEN json_extract(r.attributes, '$."cairn.session.event"') = 1
  THEN NULL ELSE t.end_us - t.start_us END`;

/**
 * One page of a project's sessions, the last active first, and the cursor of the next page
 * (null on the last). A session's figures cover all its traces, in the period or not.
 */
export function listSessions(
  db: DatabaseSync,
  projectId: string,
  filters: SessionFilters,
): { sessions: SessionSummary[]; next: SessionCursor | null } {
  const where = ["t.project_id = ?", "t.session_id IS NOT NULL"];
  const values: Array<string | number> = [projectId];
  if (filters.tag !== undefined) {
    where.push(`t.session_id IN (SELECT s.session_id FROM trace_tags g
      JOIN traces s ON s.project_id = g.project_id AND s.trace_id = g.trace_id
      WHERE g.project_id = ? AND g.tag = ?)`);
    values.push(projectId, filters.tag);
  }
  const having = ["max(t.start_us >= ? AND t.start_us < ?) = 1"];
  values.push(filters.fromUs, filters.toUs);
  if (filters.cursor !== undefined) {
    having.push("(max(t.end_us) < ? OR (max(t.end_us) = ? AND t.session_id < ?))");
    values.push(filters.cursor.value, filters.cursor.value, filters.cursor.sessionId);
  }
  const rows = db
    .prepare(
      `SELECT t.session_id, ${totals} FROM traces t WHERE ${where.join(" AND ")}
       GROUP BY t.session_id HAVING ${having.join(" AND ")}
       ORDER BY max(t.end_us) DESC, t.session_id DESC LIMIT ?`,
    )
    .all(...values, filters.limit + 1) as unknown as SessionRow[];
  const { shown, next } = pageOf(rows, filters.limit, (last) => ({
    value: last.end_us,
    sessionId: last.session_id,
  }));
  const ids = shown.map((row) => row.session_id);
  const tags = sessionTags(db, projectId, ids);
  const turns = sessionTurns(db, projectId, ids);
  return {
    sessions: shown.map((row) =>
      toSessionSummary(row, tags.get(row.session_id) ?? [], turns.get(row.session_id)),
    ),
    next,
  };
}

/** The figures of one session, if the project has it. */
export function getSessionSummary(
  db: DatabaseSync,
  projectId: string,
  sessionId: string,
): SessionSummary | undefined {
  const row = db
    .prepare(
      `SELECT t.session_id, ${totals} FROM traces t
       WHERE t.project_id = ? AND t.session_id = ? GROUP BY t.session_id`,
    )
    .get(projectId, sessionId) as SessionRow | undefined;
  if (row === undefined) return undefined;
  return toSessionSummary(
    row,
    sessionTags(db, projectId, [sessionId]).get(sessionId) ?? [],
    sessionTurns(db, projectId, [sessionId]).get(sessionId),
  );
}

/** A page of a session's traces, oldest first, with their root span's input and output cut. */
export function sessionTraces(
  db: DatabaseSync,
  projectId: string,
  sessionId: string,
  page: { limit: number; cursor?: SessionTraceCursor | undefined },
): { traces: SessionTrace[]; next: SessionTraceCursor | null } {
  const values: Array<string | number> = [previewChars, previewChars, projectId, sessionId];
  let after = "";
  if (page.cursor !== undefined) {
    after = "AND (t.start_us > ? OR (t.start_us = ? AND t.trace_id > ?))";
    values.push(page.cursor.value, page.cursor.value, page.cursor.traceId);
  }
  const rows = db
    .prepare(
      `SELECT t.*, t.start_us AS sort_value,
         substr(s.input, 1, ?) AS input_preview, length(s.input) AS input_length,
         substr(s.output, 1, ?) AS output_preview, length(s.output) AS output_length,
         ${sessionEventAttribute} AS session_event
       FROM traces t
       LEFT JOIN spans s ON s.project_id = t.project_id AND s.trace_id = t.trace_id
         AND s.span_id = t.root_span_id
       WHERE t.project_id = ? AND t.session_id = ? ${after}
       ORDER BY t.start_us, t.trace_id LIMIT ?`,
    )
    .all(...values, page.limit + 1) as unknown as SessionTraceRow[];
  const { shown, next } = pageOf(rows, page.limit, (last) => ({
    value: last.start_us,
    traceId: last.trace_id,
  }));
  return { traces: shown.map(toSessionTrace), next };
}

/** A trace of a session as the API returns it. */
export function toSessionTrace(row: SessionTraceRow): SessionTrace {
  return {
    ...toSummary(row),
    input: preview(row.input_preview, row.input_length),
    output: preview(row.output_preview, row.output_length),
    session_event: row.session_event === 1,
  };
}

/**
 * The moments `Session.addEvent` recorded: spans of their own (outside an observed call), and
 * events carrying the session id on the spans of its calls. Oldest first.
 */
export function sessionEvents(
  db: DatabaseSync,
  projectId: string,
  sessionId: string,
): SessionEvent[] {
  const rows = db
    .prepare(
      `SELECT s.trace_id, s.span_id, ${sessionEventAttribute} AS standalone, s.events
       FROM spans s
       WHERE s.project_id = ?
         AND s.trace_id IN (SELECT trace_id FROM traces WHERE project_id = ? AND session_id = ?)
         AND (${sessionEventAttribute} = 1 OR EXISTS (SELECT 1 FROM json_each(s.events) e
           WHERE json_extract(e.value, '$.attributes."session.id"') = ?))`,
    )
    .all(projectId, projectId, sessionId, sessionId) as unknown as EventSpanRow[];
  return sessionEventsOf(rows, sessionId);
}

/** The events of a session that `rows` carry, oldest first, {@link maxSessionEvents} at most. */
export function sessionEventsOf(rows: readonly EventSpanRow[], sessionId: string): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (const row of rows) {
    const recorded = JSON.parse(row.events) as Array<{
      name: string;
      time: string;
      attributes: Record<string, unknown>;
    }>;
    // A span of its own carries the event as its first; a call's span, among its others.
    const ofSession =
      row.standalone === 1
        ? recorded.slice(0, 1)
        : recorded.filter((event) => event.attributes["session.id"] === sessionId);
    for (const event of ofSession) {
      events.push({
        name: event.name,
        time: event.time,
        trace_id: `tr_${row.trace_id}`,
        span_id: row.span_id,
        attributes: event.attributes,
      });
    }
  }
  events.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return events.slice(0, maxSessionEvents);
}

/** Every tag of each session's traces, sorted. */
function sessionTags(
  db: DatabaseSync,
  projectId: string,
  sessionIds: readonly string[],
): Map<string, string[]> {
  const bySession = new Map<string, string[]>();
  if (sessionIds.length === 0) return bySession;
  const rows = db
    .prepare(
      `SELECT DISTINCT t.session_id, g.tag FROM traces t
       JOIN trace_tags g ON g.project_id = t.project_id AND g.trace_id = t.trace_id
       WHERE t.project_id = ? AND t.session_id IN (SELECT value FROM json_each(?))
       ORDER BY g.tag`,
    )
    .all(projectId, JSON.stringify(sessionIds)) as Array<{ session_id: string; tag: string }>;
  for (const row of rows) {
    const tags = bySession.get(row.session_id) ?? [];
    tags.push(row.tag);
    bySession.set(row.session_id, tags);
  }
  return bySession;
}

/**
 * The turns of each session: read for the sessions of a page only, as each trace's root span
 * says whether it is one (the list's grouping over every session stays on the trace rows).
 */
function sessionTurns(
  db: DatabaseSync,
  projectId: string,
  sessionIds: readonly string[],
): Map<string, TurnRow> {
  if (sessionIds.length === 0) return new Map();
  const rows = db
    .prepare(
      `SELECT t.session_id, count(${turnDuration}) AS turn_count,
         avg(${turnDuration}) AS turn_mean_us, max(${turnDuration}) AS turn_max_us
       FROM traces t
       LEFT JOIN spans r ON r.project_id = t.project_id AND r.trace_id = t.trace_id
         AND r.span_id = t.root_span_id
       WHERE t.project_id = ? AND t.session_id IN (SELECT value FROM json_each(?))
       GROUP BY t.session_id`,
    )
    .all(projectId, JSON.stringify(sessionIds)) as unknown as TurnRow[];
  return new Map(rows.map((row) => [row.session_id, row]));
}

/** A session's figures as the API returns them. */
export function toSessionSummary(
  row: SessionRow,
  tags: string[],
  turns: TurnRow | undefined,
): SessionSummary {
  return {
    session_id: row.session_id,
    start_time: microsToIso(row.start_us),
    end_time: microsToIso(row.end_us),
    trace_count: row.trace_count,
    turn_count: turns?.turn_count ?? 0,
    span_count: row.span_count,
    error_count: row.error_count,
    ...usageAndCost(row),
    latency_ms: {
      mean: turns?.turn_mean_us == null ? null : turns.turn_mean_us / 1000,
      max: turns?.turn_max_us == null ? null : turns.turn_max_us / 1000,
    },
    tags,
  };
}

/** The rows of a page read with one row more than `limit`, and the next page's cursor. */
export function pageOf<Row, Cursor>(
  rows: readonly Row[],
  limit: number,
  cursorOf: (last: Row) => Cursor,
): { shown: Row[]; next: Cursor | null } {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { shown, next: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

function preview(text: string | null, length: number | null): string | null {
  if (text === null || length === null || length <= previewChars) return text;
  return `${text}…[truncated: ${length} characters in all]`;
}
