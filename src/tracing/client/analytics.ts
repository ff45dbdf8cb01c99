import { z } from "zod";
import { ConfigurationError } from "../../core/errors/index.js";
import { type SpanKind, spanKinds } from "../../core/wire/span-kind.js";
import { describeIssues } from "../../core/zod-message.js";
import { requestService } from "./request.js";

/** What analytics can group spans by. `tag`: every tag of a span is a group of its own. */
export const analyticsGroupings = ["model", "version", "kind", "tag", "name", "day"] as const;

export type AnalyticsGroupBy = (typeof analyticsGroupings)[number];

/** A date as `YYYY-MM-DD` (UTC), or a `Date` whose UTC day is meant. */
export type AnalyticsDate = string | Date;

/**
 * The period and grouping of an analytics call. Dates are whole UTC days and both ends are
 * included; without them the period is the last 30 days. Each option has a camelCase and a
 * snake_case spelling (`startDate` or `period_start`, `groupBy` or `group_by`); give one.
 */
export interface AnalyticsOptions {
  /** First day of the period. Default: 29 days before the last one. */
  startDate?: AnalyticsDate;
  /** Last day of the period, included. Default: today (UTC). */
  endDate?: AnalyticsDate;
  period_start?: AnalyticsDate;
  period_end?: AnalyticsDate;
  /** Default: `day` for metrics, `model` for costs, `kind` for performance. */
  groupBy?: AnalyticsGroupBy;
  group_by?: AnalyticsGroupBy;
  /** Only spans of this kind. */
  kind?: SpanKind;
}

/** Every report echoes the period, the grouping and the kind filter it was computed for. */
export interface AnalyticsScope {
  period_start: string;
  period_end: string;
  group_by: AnalyticsGroupBy;
  kind: SpanKind | null;
}

/**
 * A group's value: the model, version, kind, tag or name, or the date (`YYYY-MM-DD`) for `day`.
 * `null` gathers the spans without a model (or without a version).
 */
export type GroupKey = string | null;

export interface SpanMetrics {
  span_count: number;
  error_count: number;
  /** error_count / span_count; 0 when there are no spans. */
  error_rate: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface MetricsReport extends AnalyticsScope {
  /** Every span of the period once (with `group_by=tag` the groups can add up to more). */
  totals: SpanMetrics;
  groups: Array<SpanMetrics & { key: GroupKey }>;
}

export interface DayCost {
  date: string;
  cost_usd: number;
  span_count: number;
}

export interface CostReport extends AnalyticsScope {
  total_cost_usd: number;
  /** Most expensive first; each with its cost on every day it has spans. */
  groups: Array<{ key: GroupKey; cost_usd: number; span_count: number; days: DayCost[] }>;
  /** The cost of every day of the period that has spans, oldest first. */
  days: DayCost[];
}

/** Latency in milliseconds. Percentiles are nearest-rank: always a duration that was measured. */
export interface LatencyFigures {
  span_count: number;
  /** null when there are no spans (also for the other figures). */
  mean_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

export interface PerformanceReport extends AnalyticsScope {
  totals: LatencyFigures;
  groups: Array<LatencyFigures & { key: GroupKey }>;
}

const date = z.union([
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date as YYYY-MM-DD")
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), "is not a real date"),
  z
    .date({ error: "must be a YYYY-MM-DD string or a Date" })
    .refine((value) => !Number.isNaN(value.getTime()), "is an invalid Date")
    .transform((value) => value.toISOString().slice(0, 10)),
]);

const groupBy = z.enum(analyticsGroupings, {
  error: `must be one of ${analyticsGroupings.join(", ")}`,
});

const optionsSchema = z
  .strictObject({
    startDate: date.optional(),
    endDate: date.optional(),
    period_start: date.optional(),
    period_end: date.optional(),
    groupBy: groupBy.optional(),
    group_by: groupBy.optional(),
    kind: z.enum(spanKinds).optional(),
  })
  .superRefine((options, context) => {
    const pairs = [
      ["startDate", "period_start"],
      ["endDate", "period_end"],
      ["groupBy", "group_by"],
    ] as const;
    for (const [camel, snake] of pairs) {
      if (options[camel] !== undefined && options[snake] !== undefined) {
        context.addIssue({ code: "custom", message: `give ${camel} or ${snake}, not both` });
      }
    }
  });

/** The query string of an analytics call, from options in either spelling. */
function analyticsQuery(call: string, options: AnalyticsOptions): string {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(`${call}(): ${describeIssues(parsed.error, "option")}`);
  }
  const { startDate, endDate, period_start, period_end, groupBy, group_by, kind } = parsed.data;
  const entries: Array<[string, string | undefined]> = [
    ["period_start", startDate ?? period_start],
    ["period_end", endDate ?? period_end],
    ["group_by", groupBy ?? group_by],
    ["kind", kind],
  ];
  const query = new URLSearchParams();
  for (const [name, value] of entries) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/**
 * Span counts, errors and tokens of a period, grouped (by day unless `groupBy` says otherwise).
 * Needs `configure({ endpoint, apiKey })`; an error answer throws an `ApiRequestError`.
 *
 * @example
 * const { totals, groups } = await getMetrics({ startDate: "2026-11-01", endDate: "2026-11-30", groupBy: "model" });
 * console.log(totals.error_rate, groups.map((group) => [group.key, group.total_tokens]));
 */
export function getMetrics(options: AnalyticsOptions = {}): Promise<MetricsReport> {
  return requestService("GET", `/analytics/metrics${analyticsQuery("getMetrics", options)}`);
}

/**
 * USD cost of a period: the total, per group (by model unless `groupBy` says otherwise) with
 * each group's days, and per day.
 *
 * @example
 * const costs = await getCosts({ period_start: "2026-11-01", period_end: "2026-11-30" });
 * for (const day of costs.days) console.log(day.date, day.cost_usd);
 */
export function getCosts(options: AnalyticsOptions = {}): Promise<CostReport> {
  return requestService("GET", `/analytics/costs${analyticsQuery("getCosts", options)}`);
}

/**
 * Latency of a period: count, mean, p50, p95, p99 and max in milliseconds, overall and per
 * group (by span kind unless `groupBy` says otherwise).
 *
 * @example
 * const { groups } = await getPerformance({ startDate: new Date(), kind: "llm", groupBy: "model" });
 * for (const group of groups) console.log(group.key, group.p95_ms);
 */
export function getPerformance(options: AnalyticsOptions = {}): Promise<PerformanceReport> {
  return requestService("GET", `/analytics/performance${analyticsQuery("getPerformance", options)}`);
}
