// From the three reports to what the page draws: the totals of the period, one chart each for
// traces, errors, tokens, cost and latency (a line per group, the groups with most spans first),
// and every group's figures for the breakdown table.

import type { GroupKey, LatencyFigures } from "../../../core/wire/analytics.js";
import { formatCost, formatCount, formatDuration } from "../../format.js";
import type { Grouping, Reports } from "./reports.js";

export type ChartId = "traces" | "errors" | "tokens" | "cost" | "latency";

export const percentiles = ["p50", "p95", "p99"] as const;
export type Percentile = (typeof percentiles)[number];

/** The theme's colours a line can have: analytics.css defines them for light and dark. */
export const seriesColors = [
  "--analytics-series-1",
  "--analytics-series-2",
  "--analytics-series-3",
  "--analytics-series-4",
  "--analytics-series-5",
  "--analytics-series-6",
] as const;
export type SeriesColor = (typeof seriesColors)[number] | "--cairn-danger";

/** A dash pattern per line, so lines differ by more than their colour. */
const dashes: readonly (readonly number[])[] = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [1, 2]];

/** Lines drawn per chart at most; the breakdown table lists every group. */
export const maxLines = seriesColors.length;

export interface ChartSeries {
  readonly label: string;
  readonly values: ReadonlyArray<number | null>;
  readonly color: SeriesColor;
  readonly dash: readonly number[];
  /** The line over the whole period, for the legend: a sum, or the period's percentile. */
  readonly summary: string;
}

export interface ChartModel {
  readonly id: ChartId;
  readonly title: string;
  /** What is counted, in a sentence. */
  readonly description: string;
  /** Each bucket's start, ms since the epoch. */
  readonly times: readonly number[];
  readonly series: readonly ChartSeries[];
  /** Every group together per bucket (for sums), shown as the table's last column. */
  readonly all?: ReadonlyArray<number | null>;
  readonly format: (value: number) => string;
  /** Counts: the axis marks whole numbers only. */
  readonly whole?: boolean;
}

export interface Totals {
  readonly traces: number;
  readonly spans: number;
  readonly errors: number;
  readonly errorRate: number;
  readonly tokens: number;
  readonly cost: number;
  readonly p50: number | null;
  readonly p95: number | null;
}

export interface GroupRow {
  readonly key: GroupKey;
  readonly label: string;
  readonly traces: number;
  readonly spans: number;
  readonly errors: number;
  readonly errorRate: number;
  readonly tokens: number;
  readonly cost: number | null;
  readonly latency: LatencyFigures | undefined;
}

export interface Analytics {
  readonly totals: Totals;
  readonly charts: readonly ChartModel[];
  /** Every group, most spans first; empty without a grouping. */
  readonly groups: readonly GroupRow[];
}

const groupNouns: Readonly<Record<Exclude<Grouping, "none">, string>> = {
  model: "model",
  version: "version",
  kind: "kind",
  tag: "tag",
  name: "name",
  service: "service",
  day: "day",
};

/** How a group is named on the page: its key, or what a null key means. */
export function groupLabel(key: GroupKey, grouping: Grouping): string {
  if (key !== null) return key;
  return grouping === "none" ? "(none)" : `(no ${groupNouns[grouping]})`;
}

type Line = { label: string; values: ReadonlyArray<number | null>; color?: SeriesColor };

export function buildAnalytics(
  reports: Reports,
  grouping: Grouping,
  percentile: Percentile,
): Analytics {
  const { metrics, costs, performance } = reports;
  const series = metrics.series ?? [];
  const times = series.map((bucket) => Date.parse(bucket.start));
  const totals: Totals = {
    traces: sum(series.map((bucket) => bucket.trace_count)),
    spans: metrics.totals.span_count,
    errors: metrics.totals.error_count,
    errorRate: metrics.totals.error_rate,
    tokens: metrics.totals.total_tokens,
    cost: costs.total_cost_usd,
    p50: performance.totals.p50_ms,
    p95: performance.totals.p95_ms,
  };
  const by = grouping === "none" ? undefined : grouping;
  const groupNoun = by === undefined ? "" : groupNouns[by];
  const shown = metrics.groups.slice(0, maxLines);
  const costByKey = new Map(costs.groups.map((group) => [group.key, group]));
  const latencyByKey = new Map(performance.groups.map((group) => [group.key, group]));
  const metricsOf = (key: GroupKey) => metrics.groups.find((group) => group.key === key)?.series;

  // The charts of sums: every span together per bucket, and a group's part of it.
  const sums: Array<{
    id: ChartId;
    title: string;
    description: string;
    format: (value: number) => string;
    all: ReadonlyArray<number | null>;
    ofGroup: (key: GroupKey) => ReadonlyArray<number | null> | undefined;
    /** Without a grouping: these lines, and `all` in the table; else one line, `all`. */
    ungrouped?: Line[];
    color?: SeriesColor;
  }> = [
    {
      id: "traces",
      title: "Traces",
      description:
        by === undefined
          ? "Traces that started in each bucket."
          : `Traces that started in each bucket. A trace counts under its root span's ${groupNoun}${by === "tag" ? "s" : ""}.`,
      format: formatCount,
      all: series.map((bucket) => bucket.trace_count),
      ofGroup: (key) => metricsOf(key)?.map((bucket) => bucket.trace_count),
    },
    {
      id: "errors",
      title: "Errors",
      description: "Spans that ended in an error.",
      format: formatCount,
      all: series.map((bucket) => bucket.error_count),
      ofGroup: (key) => metricsOf(key)?.map((bucket) => bucket.error_count),
      color: "--cairn-danger",
    },
    {
      id: "tokens",
      title: "Tokens",
      description: "Tokens of model calls (llm and embedding spans).",
      format: formatCount,
      all: series.map((bucket) => bucket.total_tokens),
      ofGroup: (key) => metricsOf(key)?.map((bucket) => bucket.total_tokens),
      ungrouped: [
        { label: "Prompt", values: series.map((bucket) => bucket.prompt_tokens) },
        { label: "Completion", values: series.map((bucket) => bucket.completion_tokens) },
      ],
    },
    {
      id: "cost",
      title: "Cost",
      description: "USD cost of model calls.",
      format: formatCost,
      all: (costs.series ?? []).map((bucket) => bucket.cost_usd),
      ofGroup: (key) => costByKey.get(key)?.series?.map((bucket) => bucket.cost_usd),
    },
  ];
  const empty = times.map(() => 0);
  const sumCharts = sums.map((chart): ChartModel => {
    const lines: Line[] =
      by === undefined
        ? (chart.ungrouped ?? [
            {
              label: chart.title,
              values: chart.all,
              ...(chart.color ? { color: chart.color } : {}),
            },
          ])
        : shown.map((group) => ({
            label: groupLabel(group.key, grouping),
            values: chart.ofGroup(group.key) ?? empty,
          }));
    const withAll = by !== undefined || chart.ungrouped !== undefined;
    return {
      id: chart.id,
      title: chart.title,
      description: chart.description,
      times,
      format: chart.format,
      whole: chart.format === formatCount,
      series: lines.map((line, index) => ({
        label: line.label,
        values: line.values,
        color: line.color ?? colorAt(index),
        dash: dashAt(index),
        summary: chart.format(sum(line.values)),
      })),
      ...(withAll ? { all: chart.all } : {}),
    };
  });

  // Percentiles do not add up: without a grouping, three lines; with one, the chosen one per group.
  const field = `${percentile}_ms` as const;
  const latency: ChartModel = {
    id: "latency",
    title: "Latency",
    description:
      by === undefined
        ? "Span durations: 50th, 95th and 99th percentile (nearest rank)."
        : `Span durations: ${percentile} (nearest rank) of each ${groupNoun}.`,
    times,
    format: formatDuration,
    series:
      by === undefined
        ? percentiles.map((name, index) => ({
            label: name,
            values: (performance.series ?? []).map((bucket) => bucket[`${name}_ms`]),
            color: colorAt(index === 2 ? 3 : index),
            dash: dashAt(index),
            summary: formatDuration(performance.totals[`${name}_ms`]),
          }))
        : shown.map((group, index) => ({
            label: groupLabel(group.key, grouping),
            values:
              latencyByKey.get(group.key)?.series?.map((bucket) => bucket[field]) ??
              times.map(() => null),
            color: colorAt(index),
            dash: dashAt(index),
            summary: formatDuration(latencyByKey.get(group.key)?.[field]),
          })),
  };

  const groups: GroupRow[] =
    by === undefined
      ? []
      : metrics.groups.map((group) => ({
          key: group.key,
          label: groupLabel(group.key, grouping),
          traces: sum((group.series ?? []).map((bucket) => bucket.trace_count)),
          spans: group.span_count,
          errors: group.error_count,
          errorRate: group.error_rate,
          tokens: group.total_tokens,
          cost: costByKey.get(group.key)?.cost_usd ?? null,
          latency: latencyByKey.get(group.key),
        }));
  return { totals, groups, charts: [...sumCharts, latency] };
}

function sum(values: ReadonlyArray<number | null>): number {
  return values.reduce<number>((total, value) => total + (value ?? 0), 0);
}

function colorAt(index: number): SeriesColor {
  return seriesColors[index % seriesColors.length] as SeriesColor;
}

function dashAt(index: number): readonly number[] {
  return dashes[index % dashes.length] as readonly number[];
}
