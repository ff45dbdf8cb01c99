import { CairnError } from "../../core/errors/index.js";
import { nearestRankPercentiles } from "../../core/percentiles.js";
import type {
  AnalyticsGroupBy,
  AnalyticsInterval,
  CostBucket,
  CostReport,
  DayCost,
  GroupKey,
  LatencyBucket,
  LatencyFigures,
  MetricsBucket,
  MetricsReport,
  PerformanceReport,
  SpanMetrics,
} from "../../core/wire/analytics.js";
import type { SpanKind } from "../../core/wire/index.js";
import { type Cell, dayUs, hourUs, type SpanCell, type TagCell } from "./analytics-cells.js";
import { microsToIso } from "./span-rows.js";

export interface AnalyticsQuery {
  /** The period's first and last UTC day (YYYY-MM-DD, both included), echoed in the report. */
  readonly periodStart: string;
  readonly periodEnd: string;
  /** The period as microseconds since the epoch, [fromUs, toUs), on whole hours. */
  readonly fromUs: number;
  readonly toUs: number;
  /** Echo `from` and `to` as instants (the query gave them, or an interval). */
  readonly echoRange?: boolean | undefined;
  /** Add `series`, the figures of each hour or day, to the report and to each group. */
  readonly interval?: AnalyticsInterval | undefined;
  readonly groupBy: AnalyticsGroupBy;
  readonly kind?: SpanKind | undefined;
  /** Only the spans of this service (`service.name`). */
  readonly service?: string | undefined;
}

/**
 * Where a report reads its cells: SQLite's view (ProjectCells, analytics-view.ts) or the
 * PostgreSQL store's rollups (postgres/analytics.ts). Both cut the period alike: a day's cells
 * whole when the range holds the day, else (or with `byHour`) cells of one hour each.
 */
export interface CellSource {
  spanCells(fromUs: number, toUs: number, byHour?: boolean): SpanCell[];
  tagCells(fromUs: number, toUs: number, byHour?: boolean): TagCell[];
}

/**
 * The most buckets a report's series may have, its groups' together: a group per tag (or name)
 * times a thousand days is more than a report can hold (about 150 bytes a bucket).
 */
export const maxSeriesBuckets = 200_000;

/** Span counts, errors and tokens of the period, overall and per group. */
export function metricsReport(cells: CellSource, query: AnalyticsQuery): MetricsReport {
  const { all, groups } = gather(cells, query);
  const list = [...groups].map(([key, members]) => ({
    key,
    ...spanMetrics(members),
    ...seriesOf(query, members, metricsBucket),
  }));
  return {
    ...scope(query),
    totals: spanMetrics(all),
    groups: ordered(list, query.groupBy, (group) => group.span_count),
    ...seriesOf(query, all, metricsBucket),
  };
}

/** USD cost of the period: total, per group (with its days) and per day. */
export function costReport(cells: CellSource, query: AnalyticsQuery): CostReport {
  const { all, groups } = gather(cells, query);
  const list = [...groups].map(([key, members]) => ({
    key,
    cost_usd: usd(sumOf(members, "costUsd")),
    span_count: sumOf(members, "spans"),
    days: costByDay(members),
    ...seriesOf(query, members, costBucket),
  }));
  return {
    ...scope(query),
    total_cost_usd: usd(sumOf(all, "costUsd")),
    groups: ordered(list, query.groupBy, (group) => group.cost_usd),
    days: costByDay(all),
    ...seriesOf(query, all, costBucket),
  };
}

/** Latency of the period (count, mean, nearest-rank p50/p95/p99, max), overall and per group. */
export function performanceReport(cells: CellSource, query: AnalyticsQuery): PerformanceReport {
  const { all, groups } = gather(cells, query);
  // Each group's durations side by side in one buffer; without tags the groups together are
  // every span once, so the totals are read from the same buffer.
  const buffer = scratch(
    Math.max(sumOf(all, "spans"), sumOf([...groups.values()].flat(), "spans")),
  );
  let end = 0;
  const list = [...groups].map(([key, members]) => {
    const start = end;
    end = fill(buffer, start, members);
    return { key, ...latency(members, buffer.subarray(start, end)) };
  });
  if (query.groupBy === "tag") end = fill(buffer, 0, all);
  const totals = latency(all, buffer.subarray(0, end));
  // The groups' and the totals' figures are taken: the buffer is free for the buckets, one at a
  // time.
  const bucketLatency = (start: string, members: readonly Cell[]): LatencyBucket => ({
    start,
    ...latency(members, buffer.subarray(0, fill(buffer, 0, members))),
  });
  return {
    ...scope(query),
    totals,
    groups: ordered(
      list.map((group) => ({
        ...group,
        ...seriesOf(query, groups.get(group.key) ?? [], bucketLatency),
      })),
      query.groupBy,
      (group) => group.span_count,
    ),
    ...seriesOf(query, all, bucketLatency),
  };
}

/**
 * The span cells of the period (every span once, for totals), and the cells of each group: span
 * cells, or tag cells for `tag`, where a span with two tags is in two groups.
 */
function gather(cells: CellSource, query: AnalyticsQuery) {
  const byHour = query.interval === "hour";
  const selected = (cell: SpanCell | TagCell) =>
    (query.kind === undefined || cell.kind === query.kind) &&
    (query.service === undefined || cell.service === query.service);
  const all = cells.spanCells(query.fromUs, query.toUs, byHour).filter(selected);
  const grouped: Cell[] =
    query.groupBy === "tag"
      ? cells.tagCells(query.fromUs, query.toUs, byHour).filter(selected)
      : all;
  const groups = new Map<GroupKey, Cell[]>();
  for (const cell of grouped) {
    const key = groupKey(cell, query.groupBy);
    const members = groups.get(key);
    if (members === undefined) groups.set(key, [cell]);
    else members.push(cell);
  }
  const buckets = bucketsOf(query);
  if (buckets !== undefined && groups.size * buckets > maxSeriesBuckets) {
    throw new CairnError(
      "invalid_request",
      `group_by=${query.groupBy} with interval=${query.interval} gives ${groups.size.toLocaleString("en-US")} groups of ${buckets.toLocaleString("en-US")} buckets, more than ${maxSeriesBuckets.toLocaleString("en-US")} buckets in all: choose a shorter period${query.interval === "hour" ? ", interval=day" : ""} or a kind or service, or leave out interval for the groups' figures without series`,
    );
  }
  return { all, groups };
}

/** How many buckets each series of the report has; undefined without an interval. */
function bucketsOf(query: AnalyticsQuery): number | undefined {
  if (query.interval === undefined) return undefined;
  const size = query.interval === "hour" ? hourUs : dayUs;
  return Math.ceil(query.toUs / size) - Math.floor(query.fromUs / size);
}

function groupKey(cell: Cell, groupBy: AnalyticsGroupBy): GroupKey {
  switch (groupBy) {
    case "day":
      return dateOf(cell.day);
    case "kind":
      return cell.kind;
    case "tag":
      return (cell as TagCell).tag;
    default:
      return (cell as SpanCell)[groupBy];
  }
}

function scope(query: AnalyticsQuery) {
  return {
    period_start: query.periodStart,
    period_end: query.periodEnd,
    group_by: query.groupBy,
    kind: query.kind ?? null,
    service: query.service ?? null,
    ...(query.echoRange === true
      ? { from: microsToIso(query.fromUs), to: microsToIso(query.toUs) }
      : {}),
    ...(query.interval === undefined ? {} : { interval: query.interval }),
  };
}

/**
 * `{ series }`, the figures of every bucket of the period from `cells` (empty buckets included),
 * when the query asks for an interval; `{}` otherwise, so the report is as before.
 */
function seriesOf<T>(
  query: AnalyticsQuery,
  cells: readonly Cell[],
  figures: (start: string, members: readonly Cell[]) => T,
): { series?: T[] } {
  const count = bucketsOf(query);
  if (count === undefined) return {};
  // By hour every cell is one hour's (gather cut them); by day a cell is one day's or less.
  const size = query.interval === "hour" ? hourUs : dayUs;
  const first = Math.floor(query.fromUs / size);
  const buckets: Cell[][] = Array.from({ length: count }, () => []);
  for (const cell of cells) {
    const bucket = query.interval === "hour" ? (cell.hour ?? cell.day * 24) : cell.day;
    buckets[bucket - first]?.push(cell);
  }
  return {
    series: buckets.map((members, index) => figures(microsToIso((first + index) * size), members)),
  };
}

function metricsBucket(start: string, cells: readonly Cell[]): MetricsBucket {
  return { start, trace_count: sumOf(cells, "roots"), ...spanMetrics(cells) };
}

function costBucket(start: string, cells: readonly Cell[]): CostBucket {
  return { start, cost_usd: usd(sumOf(cells, "costUsd")), span_count: sumOf(cells, "spans") };
}

type Summed = Exclude<keyof Cell, "day" | "hour" | "kind" | "durations">;

function sumOf(cells: readonly Cell[], field: Summed): number {
  let sum = 0;
  for (const cell of cells) sum += cell[field];
  return sum;
}

function spanMetrics(cells: readonly Cell[]): SpanMetrics {
  const spans = sumOf(cells, "spans");
  const errors = sumOf(cells, "errors");
  return {
    span_count: spans,
    error_count: errors,
    error_rate: spans === 0 ? 0 : errors / spans,
    prompt_tokens: sumOf(cells, "promptTokens"),
    completion_tokens: sumOf(cells, "completionTokens"),
    total_tokens: sumOf(cells, "totalTokens"),
  };
}

function costByDay(cells: readonly Cell[]): DayCost[] {
  const days = new Map<number, { cost: number; spans: number }>();
  for (const cell of cells) {
    const day = days.get(cell.day) ?? { cost: 0, spans: 0 };
    day.cost += cell.costUsd;
    day.spans += cell.spans;
    days.set(cell.day, day);
  }
  return [...days]
    .sort(([a], [b]) => a - b)
    .map(([day, sums]) => ({
      date: dateOf(day),
      cost_usd: usd(sums.cost),
      span_count: sums.spans,
    }));
}

let scratchBuffer = new Float64Array(0);

/** A buffer for durations, kept between calls: a report allocates nothing per span. */
function scratch(size: number): Float64Array {
  if (scratchBuffer.length < size) scratchBuffer = new Float64Array(size);
  return scratchBuffer;
}

/** Copies the durations of `cells` into `buffer` from `start`; returns where they end. */
function fill(buffer: Float64Array, start: number, cells: readonly Cell[]): number {
  let offset = start;
  for (const cell of cells) {
    buffer.set(cell.durations.subarray(0, cell.spans), offset);
    offset += cell.spans;
  }
  return offset;
}

/** The figures of `cells`, whose durations are `durations` (reordered by the selection). */
function latency(cells: readonly Cell[], durations: Float64Array): LatencyFigures {
  const count = durations.length;
  if (count === 0) {
    return { span_count: 0, mean_ms: null, p50_ms: null, p95_ms: null, p99_ms: null, max_ms: null };
  }
  const [p50, p95, p99, max] = nearestRankPercentiles(durations, [50, 95, 99, 100]);
  return {
    span_count: count,
    mean_ms: milliseconds(sumOf(cells, "durationUs") / count),
    p50_ms: milliseconds(p50),
    p95_ms: milliseconds(p95),
    p99_ms: milliseconds(p99),
    max_ms: milliseconds(max),
  };
}

/** Day groups in date order; other groups by their main figure, largest first. */
function ordered<T extends { key: GroupKey }>(
  groups: T[],
  groupBy: AnalyticsGroupBy,
  figure: (group: T) => number,
): T[] {
  if (groupBy === "day") return groups.sort((a, b) => compareKeys(a.key, b.key));
  return groups.sort((a, b) => figure(b) - figure(a) || compareKeys(a.key, b.key));
}

function compareKeys(a: GroupKey, b: GroupKey): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function dateOf(day: number): string {
  return microsToIso(day * dayUs).slice(0, 10);
}

/** Microseconds as milliseconds, to the microsecond. */
function milliseconds(us: number | null | undefined): number | null {
  return us === null || us === undefined ? null : Math.round(us) / 1000;
}

/** Sums of floating-point costs, without the noise in the last digits. */
function usd(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}
