// The traces page's view, read from the URL: the period, the filters, the search, the sort and
// the page. The same view says which API query to make and whether a live trace belongs in it.

import type { SpanKind } from "../../../core/wire/span-kind.js";
import type { TraceSummary } from "../../../core/wire/traces.js";
import { parseSpanKindParam } from "../../ui/kind-select.js";

/** A row of the list, as GET /analytics/traces and the live "trace" events give it. */
export type TraceRow = TraceSummary;

/** Filters typed as text, in the order the form shows them. */
export const textFilters = [
  { name: "session_id", label: "Session" },
  { name: "tag", label: "Tag" },
  { name: "model", label: "Model" },
  { name: "version", label: "Version" },
  { name: "name", label: "Name" },
  { name: "service", label: "Service" },
] as const;

export type TextFilter = (typeof textFilters)[number]["name"];
export type Sort = "time" | "latency" | "cost";

/** The periods offered, in days up to today (UTC); "custom" takes two dates. */
export const lastDays = ["1", "7", "30", "90"] as const;
export const defaultLastDays = "30";

export interface TraceView {
  readonly q: string | undefined;
  readonly kind: SpanKind | undefined;
  readonly status: "ok" | "error" | undefined;
  readonly text: Readonly<Record<TextFilter, string | undefined>>;
  /** Days up to today, or undefined for a custom period. */
  readonly last: string | undefined;
  /** YYYY-MM-DD, UTC, inclusive. */
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly sort: Sort;
  readonly order: "asc" | "desc";
  readonly cursor: string | undefined;
  /** The cursors of the pages before this one (the first page's is ""), for "Newer". */
  readonly back: readonly string[];
}

const dayMs = 86_400_000;
const isDay = (value: string | null): value is string =>
  value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value);

/** Today as the service counts days (UTC). */
export function today(now = Date.now()): string {
  return new Date(now).toISOString().slice(0, 10);
}

export function daysBefore(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - days * dayMs).toISOString().slice(0, 10);
}

export function readView(params: URLSearchParams, now = Date.now()): TraceView {
  const value = (name: string) => {
    const raw = params.get(name)?.trim();
    return raw === undefined || raw === "" ? undefined : raw;
  };
  const kind = value("kind");
  const status = value("status");
  const sort = value("sort");
  const start = params.get("period_start");
  const end = params.get("period_end");
  const custom = isDay(start) || isDay(end);
  const last = custom
    ? undefined
    : (lastDays.find((days) => days === params.get("last")) ?? defaultLastDays);
  const periodEnd = isDay(end) ? end : today(now);
  const periodStart = isDay(start)
    ? start
    : daysBefore(periodEnd, Number(last ?? defaultLastDays) - 1);
  const back = params.get("back");
  return {
    q: value("q"),
    kind: parseSpanKindParam(kind),
    status: status === "ok" || status === "error" ? status : undefined,
    text: Object.fromEntries(textFilters.map(({ name }) => [name, value(name)])) as Record<
      TextFilter,
      string | undefined
    >,
    last,
    periodStart,
    periodEnd,
    sort: sort === "latency" || sort === "cost" ? sort : "time",
    order: params.get("order") === "asc" ? "asc" : "desc",
    cursor: value("cursor"),
    back: back === null || back === "" ? [] : back.split(","),
  };
}

/** The API's query for the view (GET /analytics/traces). */
export function listQuery(view: TraceView): Record<string, string | number | undefined> {
  return {
    period_start: view.periodStart,
    period_end: view.periodEnd,
    q: view.q,
    kind: view.kind,
    status: view.status,
    ...view.text,
    sort: view.sort,
    order: view.order,
    cursor: view.cursor,
    limit: 50,
  };
}

/** Whether any filter (not the period, sort or page) is set. */
export function isFiltered(view: TraceView): boolean {
  return (
    view.q !== undefined ||
    view.kind !== undefined ||
    view.status !== undefined ||
    Object.values(view.text).some((value) => value !== undefined)
  );
}

/**
 * Whether a trace belongs in the view: true or false, or undefined when the page cannot tell
 * (a search, or a service filter: the row does not say).
 */
export function rowMatches(row: TraceRow, view: TraceView): boolean | undefined {
  const day = row.start_time.slice(0, 10);
  if (day < view.periodStart || day > view.periodEnd) return false;
  if (view.kind !== undefined && row.kind !== view.kind) return false;
  if (view.status !== undefined && row.status !== view.status) return false;
  const { text } = view;
  if (text.session_id !== undefined && row.session_id !== text.session_id) return false;
  if (text.version !== undefined && row.version !== text.version) return false;
  if (text.name !== undefined && row.name !== text.name) return false;
  if (text.tag !== undefined && row.tags !== undefined && !row.tags.includes(text.tag)) {
    return false;
  }
  if (text.model !== undefined && row.models !== undefined && !row.models.includes(text.model)) {
    return false;
  }
  const unknown =
    view.q !== undefined ||
    text.service !== undefined ||
    (text.tag !== undefined && row.tags === undefined) ||
    (text.model !== undefined && row.models === undefined);
  return unknown ? undefined : true;
}

/** Live traces go straight into the list only on its first page, newest first. */
export function showsNewestFirst(view: TraceView): boolean {
  return view.sort === "time" && view.order === "desc" && view.cursor === undefined;
}
