import { z } from "zod";
import { ConfigurationError } from "../../core/errors/index.js";
import {
  type AnalyticsGroupBy,
  analyticsGroupings,
  type CostReport,
  costReportSchema,
  type MetricsReport,
  metricsReportSchema,
  type PerformanceReport,
  performanceReportSchema,
} from "../../core/wire/analytics.js";
import { type SpanKind, spanKinds } from "../../core/wire/span-kind.js";
import { describeIssues } from "../../core/zod-message.js";
import { requestService } from "./request.js";

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
  /** Only spans of this service (the `service.name` of the resource that sent them). */
  service?: string;
}

// A Date stands for its UTC day; anything else must already be YYYY-MM-DD.
const date = z.preprocess(
  (value) =>
    value instanceof Date && !Number.isNaN(value.getTime())
      ? value.toISOString().slice(0, 10)
      : value,
  z
    .string({ error: "must be a date as YYYY-MM-DD or a valid Date" })
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date as YYYY-MM-DD")
    .refine((value) => isCalendarDate(value), "is not a real date"),
);

/** True for a day that exists: Date.parse would roll 2026-02-30 over to March. */
function isCalendarDate(value: string): boolean {
  const time = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(value);
}

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
    service: z.string().min(1, "must not be empty").max(256).optional(),
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
  const { startDate, endDate, period_start, period_end, groupBy, group_by, kind, service } =
    parsed.data;
  const entries: Array<[string, string | undefined]> = [
    ["period_start", startDate ?? period_start],
    ["period_end", endDate ?? period_end],
    ["group_by", groupBy ?? group_by],
    ["kind", kind],
    ["service", service],
  ];
  const query = new URLSearchParams();
  for (const [name, value] of entries) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/**
 * Span counts, errors and tokens of a period, grouped (by day unless `groupBy` says otherwise).
 * Needs `configure({ endpoint, apiKey })`. Bad options reject with a `ConfigurationError`
 * before any request; an error answer of the service rejects with an `ApiRequestError`.
 *
 * @example
 * const { totals, groups } = await getMetrics({ startDate: "2026-11-01", endDate: "2026-11-30", groupBy: "model" });
 * console.log(totals.error_rate, groups.map((group) => [group.key, group.total_tokens]));
 */
export async function getMetrics(options: AnalyticsOptions = {}): Promise<MetricsReport> {
  return requestService(
    "GET",
    `/analytics/metrics${analyticsQuery("getMetrics", options)}`,
    undefined,
    metricsReportSchema,
  );
}

/**
 * USD cost of a period: the total, per group (by model unless `groupBy` says otherwise) with
 * each group's days, and per day.
 *
 * @example
 * const costs = await getCosts({ period_start: "2026-11-01", period_end: "2026-11-30" });
 * for (const day of costs.days) console.log(day.date, day.cost_usd);
 */
export async function getCosts(options: AnalyticsOptions = {}): Promise<CostReport> {
  return requestService(
    "GET",
    `/analytics/costs${analyticsQuery("getCosts", options)}`,
    undefined,
    costReportSchema,
  );
}

/**
 * Latency of a period: count, mean, p50, p95, p99 and max in milliseconds, overall and per
 * group (by span kind unless `groupBy` says otherwise).
 *
 * @example
 * const { groups } = await getPerformance({ startDate: new Date(), kind: "llm", groupBy: "model" });
 * for (const group of groups) console.log(group.key, group.p95_ms);
 */
export async function getPerformance(options: AnalyticsOptions = {}): Promise<PerformanceReport> {
  return requestService(
    "GET",
    `/analytics/performance${analyticsQuery("getPerformance", options)}`,
    undefined,
    performanceReportSchema,
  );
}
