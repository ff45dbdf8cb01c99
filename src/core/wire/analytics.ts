import { z } from "zod";
import { spanKinds } from "./span-kind.js";

/**
 * What analytics can group spans by. `tag`: every tag of a span is a group of its own;
 * `service`: the `service.name` of the resource that sent the span.
 */
export const analyticsGroupings = [
  "model",
  "version",
  "kind",
  "tag",
  "name",
  "service",
  "day",
] as const;

export type AnalyticsGroupBy = (typeof analyticsGroupings)[number];

/** The buckets of a report's `series`: whole UTC hours or days. */
export const analyticsIntervals = ["hour", "day"] as const;

export type AnalyticsInterval = (typeof analyticsIntervals)[number];

// The reports of GET /analytics/{metrics,costs,performance}, shared by the service, the SDK and
// the OpenAPI document; the types below are inferred from them.
const count = z.number().int();
const usd = z.number().describe("USD, rounded to 1e-10");
const milliseconds = z.number().nullable().describe("milliseconds; null when there are no spans");

const scope = {
  period_start: z.string().describe("first day of the period, YYYY-MM-DD (UTC), included"),
  period_end: z.string().describe("last day of the period, YYYY-MM-DD (UTC), included"),
  group_by: z.enum(analyticsGroupings),
  kind: z.enum(spanKinds).nullable().describe("the kind filter; null for every kind"),
  service: z
    .string()
    .nullable()
    .optional()
    .describe("the service filter (service.name); null for every service"),
  from: z
    .string()
    .optional()
    .describe(
      "with from, to or interval in the query: the start of the period, an ISO 8601 instant on a whole hour (UTC), included",
    ),
  to: z
    .string()
    .optional()
    .describe("with from, to or interval in the query: the end of the period, excluded"),
  interval: z
    .enum(analyticsIntervals)
    .optional()
    .describe("with interval in the query: the size of each bucket of `series`"),
};

const bucketStart = z
  .string()
  .describe(
    "the bucket's start, an ISO 8601 instant on a whole UTC hour or day; from and to may cut the first and last bucket",
  );

/** A report's `series`: every bucket of the period, oldest first, empty ones included. */
function seriesOf<T extends z.ZodRawShape>(bucket: z.ZodObject<T>) {
  return z
    .array(bucket.extend({ start: bucketStart }))
    .optional()
    .describe(
      "with interval in the query: every bucket of the period, oldest first, empty ones included",
    );
}

const groupKeySchema = z
  .string()
  .nullable()
  .describe(
    "the model, version, kind, tag, name or service of the group, or its date (YYYY-MM-DD) for day; null for spans without a model or version",
  );

const spanMetricsSchema = z.object({
  span_count: count,
  error_count: count,
  error_rate: z.number().describe("error_count / span_count; 0 when there are no spans"),
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
});

const dayCostSchema = z.object({
  date: z.string().describe("YYYY-MM-DD (UTC)"),
  cost_usd: usd,
  span_count: count,
});

const latencySchema = z.object({
  span_count: count,
  mean_ms: milliseconds,
  p50_ms: milliseconds,
  p95_ms: milliseconds,
  p99_ms: milliseconds,
  max_ms: milliseconds,
});

const metricsBucketSchema = spanMetricsSchema.extend({
  trace_count: count.describe(
    "spans without a parent (or marked cairn.root): the traces that start in the bucket",
  ),
});

export const metricsReportSchema = z.object({
  ...scope,
  totals: spanMetricsSchema.describe("every span of the period once"),
  groups: z
    .array(spanMetricsSchema.extend({ key: groupKeySchema, series: seriesOf(metricsBucketSchema) }))
    .describe("days in date order, other groups by span_count, largest first"),
  series: seriesOf(metricsBucketSchema),
});

const costBucketSchema = z.object({ cost_usd: usd, span_count: count });

export const costReportSchema = z.object({
  ...scope,
  total_cost_usd: usd,
  groups: z
    .array(
      z.object({
        key: groupKeySchema,
        cost_usd: usd,
        span_count: count,
        days: z.array(dayCostSchema).describe("the group's days that have spans, oldest first"),
        series: seriesOf(costBucketSchema),
      }),
    )
    .describe("days in date order, other groups by cost, most expensive first"),
  days: z.array(dayCostSchema).describe("the days of the period that have spans, oldest first"),
  series: seriesOf(costBucketSchema),
});

export const performanceReportSchema = z.object({
  ...scope,
  totals: latencySchema.describe("every span of the period once"),
  groups: z
    .array(latencySchema.extend({ key: groupKeySchema, series: seriesOf(latencySchema) }))
    .describe("days in date order, other groups by span_count, largest first"),
  series: seriesOf(latencySchema),
});

/**
 * A group's value: the model, version, kind, tag, name or service, or the date (`YYYY-MM-DD`)
 * for `day`.
 * `null` gathers the spans without a model (or without a version).
 */
export type GroupKey = z.infer<typeof groupKeySchema>;
/** Span count, errors (and their rate) and token totals. */
export type SpanMetrics = z.infer<typeof spanMetricsSchema>;
/** The USD cost of one day. */
export type DayCost = z.infer<typeof dayCostSchema>;
/** Latency in milliseconds; percentiles are nearest-rank, so always a measured duration. */
export type LatencyFigures = z.infer<typeof latencySchema>;
/** Metrics of a period: `totals` counts every span once; with `tag` the groups may add up to more. */
export type MetricsReport = z.infer<typeof metricsReportSchema>;
/** Cost of a period: total, per group (each with its days) and per day. */
export type CostReport = z.infer<typeof costReportSchema>;
/** Latency of a period: count, mean, p50, p95, p99 and max, overall and per group. */
export type PerformanceReport = z.infer<typeof performanceReportSchema>;
/** One bucket of a metrics report's series: its span metrics and the traces that start in it. */
export type MetricsBucket = z.infer<typeof metricsBucketSchema> & { start: string };
/** One bucket of a cost report's series. */
export type CostBucket = z.infer<typeof costBucketSchema> & { start: string };
/** One bucket of a performance report's series. */
export type LatencyBucket = LatencyFigures & { start: string };
