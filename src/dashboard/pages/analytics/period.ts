// The period the analytics page shows, from its URL: the last 24 hours by hour, the last 7 or 30
// days by day, or days chosen by the reader. Days are UTC days, as the service counts them.

import type { AnalyticsInterval } from "../../../core/wire/analytics.js";

export const periodChoices = [
  { value: "24h", label: "Last 24 hours" },
  { value: "7d", label: "Last 7 days" },
  { value: "30d", label: "Last 30 days" },
  { value: "custom", label: "Custom" },
] as const;

export type PeriodChoice = (typeof periodChoices)[number]["value"];

export const defaultPeriod: PeriodChoice = "7d";

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
/** A longer custom period is refused: the service gives at most 1,000 buckets. */
const maxDays = 1000;
/** Custom periods up to this many days are shown by hour. */
const hourlyUpToDays = 2;

export interface Period {
  readonly choice: PeriodChoice;
  /** The range as the analytics endpoints take it: period_start/period_end, or from/to. */
  readonly range: Readonly<Record<string, string>>;
  readonly interval: AnalyticsInterval;
  /** Its first and last day (YYYY-MM-DD), for the custom fields. */
  readonly firstDay: string;
  readonly lastDay: string;
}

export type PeriodResult =
  | { readonly ok: true; readonly period: Period }
  | { readonly ok: false; readonly field: "from" | "to"; readonly message: string };

/** The period of the page's URL parameters (`period`, and `from`, `to` when custom). */
export function periodFromParams(params: URLSearchParams, now: number): PeriodResult {
  const choice = parseChoice(params.get("period"));
  const today = dayOf(now);
  switch (choice) {
    case "24h": {
      const to = Math.floor(now / hourMs) * hourMs + hourMs;
      const from = to - dayMs;
      return {
        ok: true,
        period: {
          choice,
          range: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
          interval: "hour",
          firstDay: dayOf(from),
          lastDay: dayOf(to - 1),
        },
      };
    }
    case "7d":
    case "30d":
      return {
        ok: true,
        period: byDays(choice, addDays(today, choice === "7d" ? -6 : -29), today),
      };
    case "custom":
      return customPeriod(params.get("from"), params.get("to"), today);
  }
}

function customPeriod(from: string | null, to: string | null, today: string): PeriodResult {
  const first = from ?? addDays(today, -6);
  const last = to ?? today;
  if (!isDay(first)) {
    return { ok: false, field: "from", message: "The start is not a date (YYYY-MM-DD)." };
  }
  if (!isDay(last)) {
    return { ok: false, field: "to", message: "The end is not a date (YYYY-MM-DD)." };
  }
  const days = (Date.parse(last) - Date.parse(first)) / dayMs + 1;
  if (days < 1) {
    return { ok: false, field: "to", message: `The end (${last}) is before the start (${first}).` };
  }
  if (days > maxDays) {
    return {
      ok: false,
      field: "from",
      message: `The period has ${days} days; choose at most ${maxDays}.`,
    };
  }
  return { ok: true, period: byDays("custom", first, last, days <= hourlyUpToDays) };
}

function byDays(choice: PeriodChoice, first: string, last: string, hourly = false): Period {
  return {
    choice,
    range: { period_start: first, period_end: last },
    interval: hourly ? "hour" : "day",
    firstDay: first,
    lastDay: last,
  };
}

function parseChoice(value: string | null): PeriodChoice {
  return periodChoices.find((choice) => choice.value === value)?.value ?? defaultPeriod;
}

/** The UTC day of a time, YYYY-MM-DD. */
export function dayOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** `day` moved by a number of days. */
export function addDays(day: string, days: number): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + days * dayMs);
}

function isDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(time) && dayOf(time) === value;
}
