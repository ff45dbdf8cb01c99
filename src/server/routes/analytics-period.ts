import type { AnalyticsInterval } from "../../core/wire/analytics.js";
import { ApiError } from "../http/api-error.js";
import { dayUs, hourUs } from "../store/analytics-cells.js";
import { microsToIso } from "../store/span-rows.js";
import { resolvePeriod } from "./query-params.js";

/** The most buckets a series may have: 41 days of hours, or 2.7 years of days. */
export const maxBuckets = 1000;

const defaultSpanUs = 30 * dayUs;

interface PeriodQuery {
  readonly period_start?: string | undefined;
  readonly period_end?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly interval?: AnalyticsInterval | undefined;
}

/** What a report covers: the dates it echoes, its range of microseconds on whole hours, and how
 * it is cut into buckets. */
export interface AnalyticsPeriod {
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly fromUs: number;
  readonly toUs: number;
  /** Echo `from` and `to` in the report: the query named them or an interval. */
  readonly echoRange: boolean;
  readonly interval: AnalyticsInterval | undefined;
}

/**
 * The period of an analytics query: whole UTC days from `period_start` to `period_end` (the
 * default, the last 30 days), or whole hours from `from` to `to`, never both; a 400 that says
 * which is wrong otherwise.
 */
export function resolveAnalyticsPeriod(query: PeriodQuery): AnalyticsPeriod {
  const byInstants = query.from !== undefined || query.to !== undefined;
  if (byInstants && (query.period_start !== undefined || query.period_end !== undefined)) {
    throw new ApiError(
      "invalid_request",
      "give the period as period_start and period_end (dates) or as from and to (instants), not both",
    );
  }
  let fromUs: number;
  let toUs: number;
  if (byInstants) {
    toUs = query.to === undefined ? ceilHour(Date.now() * 1000) : ceilHour(instantUs(query.to));
    fromUs = query.from === undefined ? toUs - defaultSpanUs : floorHour(instantUs(query.from));
    if (fromUs >= toUs) {
      throw new ApiError(
        "invalid_request",
        `from (${query.from ?? microsToIso(fromUs)}) is not before to (${query.to ?? microsToIso(toUs)})`,
      );
    }
  } else {
    ({ fromUs, toUs } = resolvePeriod(query));
  }
  const interval = query.interval;
  if (interval !== undefined) {
    const buckets = bucketCount(fromUs, toUs, interval);
    if (buckets > maxBuckets) {
      throw new ApiError(
        "invalid_request",
        `interval=${interval} would give ${buckets} buckets, more than ${maxBuckets}: choose a shorter period${interval === "hour" ? " or interval=day" : ""}`,
      );
    }
  }
  return {
    periodStart: microsToIso(fromUs).slice(0, 10),
    periodEnd: microsToIso(toUs - 1).slice(0, 10),
    fromUs,
    toUs,
    echoRange: byInstants || interval !== undefined,
    interval,
  };
}

/** How many hours or UTC days the range [fromUs, toUs) touches. */
export function bucketCount(fromUs: number, toUs: number, interval: AnalyticsInterval): number {
  const size = interval === "hour" ? hourUs : dayUs;
  return Math.ceil(toUs / size) - Math.floor(fromUs / size);
}

function instantUs(iso: string): number {
  return Date.parse(iso) * 1000;
}

function floorHour(us: number): number {
  return Math.floor(us / hourUs) * hourUs;
}

function ceilHour(us: number): number {
  return Math.ceil(us / hourUs) * hourUs;
}
