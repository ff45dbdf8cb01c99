// The analytics reports by hour and by day (interval), and over a period of instants (from, to):
// every bucket of the period, empty ones included, adding up to the totals; traces counted by
// their root; hours cut out of a day exactly; and the old answers unchanged without them.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  costReportSchema,
  metricsReportSchema,
  performanceReportSchema,
} from "../../src/core/wire/analytics.js";
import {
  type AnalyticsServer,
  noLatency,
  spanAt,
  startAnalyticsServer,
} from "./analytics-helpers.js";
import { seriesSpans } from "./analytics-spans.js";

const days = "period_start=2026-11-01&period_end=2026-11-04";
const dayStarts = ["01", "02", "03", "04"].map((day) => `2026-11-${day}T00:00:00.000Z`);

type Bucket = Record<string, number | string | null>;
const column = (series: Bucket[], field: string) => series.map((bucket) => bucket[field]);

describe("analytics series (interval) and periods of instants (from, to)", () => {
  let server: AnalyticsServer;
  const json = async (path: string) => {
    const response = await server.get(path);
    expect(response.status, path).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    server = await startAnalyticsServer();
    server.ingest("a", seriesSpans());
  });
  afterAll(async () => {
    await server.close();
  });

  it("gives every day of the period, empty ones too, with traces counted by their root", async () => {
    const report = await json(`/analytics/metrics?${days}&interval=day&group_by=model`);
    expect(report).toMatchObject({
      period_start: "2026-11-01",
      period_end: "2026-11-04",
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-11-05T00:00:00.000Z",
      interval: "day",
    });
    expect(column(report.series, "start")).toEqual(dayStarts);
    // The root with a host parent (cairn.root) counts as the trace's root.
    expect(column(report.series, "trace_count")).toEqual([3, 1, 0, 1]);
    expect(column(report.series, "span_count")).toEqual([6, 2, 0, 2]);
    expect(column(report.series, "error_count")).toEqual([2, 0, 0, 0]);
    expect(column(report.series, "error_rate")).toEqual([2 / 6, 0, 0, 0]);
    // Only model calls add tokens.
    expect(column(report.series, "total_tokens")).toEqual([90, 60, 0, 75]);
    const sum = (field: string) =>
      (column(report.series, field) as number[]).reduce((a, b) => a + b, 0);
    for (const field of ["span_count", "error_count", "prompt_tokens", "total_tokens"]) {
      expect(sum(field), field).toBe(report.totals[field]);
    }
    const byKey = Object.fromEntries(
      report.groups.map((group: { key: string | null; series: Bucket[] }) => [
        String(group.key),
        group.series,
      ]),
    );
    expect(Object.keys(byKey).sort()).toEqual(["claude", "gpt-4o", "null"]);
    expect(column(byKey["gpt-4o"], "span_count")).toEqual([2, 0, 0, 1]);
    expect(column(byKey.claude, "error_count")).toEqual([1, 0, 0, 0]);
    // The roots carry no model: their traces are in the null group.
    expect(column(byKey.null, "trace_count")).toEqual([3, 1, 0, 1]);
    expect(column(byKey["gpt-4o"], "trace_count")).toEqual([0, 0, 0, 0]);
  });

  it("gives the cost of each day, overall and per group", async () => {
    const report = await json(`/analytics/costs?${days}&interval=day&group_by=version`);
    expect(column(report.series, "cost_usd")).toEqual([0.06, 0.04, 0, 0.05]);
    expect(column(report.series, "span_count")).toEqual([6, 2, 0, 2]);
    const v2 = report.groups.find((group: { key: string }) => group.key === "2.0");
    expect(column(v2.series, "cost_usd")).toEqual([0.03, 0.04, 0, 0.05]);
    // The days of before are still there, as they were.
    expect(report.days.map((day: { date: string }) => day.date)).toEqual([
      "2026-11-01",
      "2026-11-02",
      "2026-11-04",
    ]);
  });

  it("gives nearest-rank percentiles of each day, and nulls for a day without spans", async () => {
    const report = await json(`/analytics/performance?${days}&interval=day&group_by=kind`);
    // 2026-11-01: 40, 60, 80, 100, 200, 300 ms.
    expect(report.series[0]).toEqual({
      start: dayStarts[0],
      span_count: 6,
      mean_ms: 130,
      p50_ms: 80,
      p95_ms: 300,
      p99_ms: 300,
      max_ms: 300,
    });
    expect(report.series[2]).toEqual({ start: dayStarts[2], ...noLatency });
    const llm = report.groups.find((group: { key: string }) => group.key === "llm");
    expect(column(llm.series, "p50_ms")).toEqual([60, 20, null, 10]);
    // The totals are those of the whole period, as without an interval.
    const plain = await json(`/analytics/performance?${days}&group_by=kind`);
    expect(report.totals).toEqual(plain.totals);
    expect(report.groups.map(({ series: _, ...group }: { series: unknown }) => group)).toEqual(
      plain.groups,
    );
  });

  it("cuts hours out of a day: from rounded down, to rounded up, by hour", async () => {
    const report = await json(
      "/analytics/metrics?from=2026-11-01T09:10:00Z&to=2026-11-01T10:05:00Z&interval=hour",
    );
    expect(report).toMatchObject({
      period_start: "2026-11-01",
      period_end: "2026-11-01",
      from: "2026-11-01T09:00:00.000Z",
      to: "2026-11-01T11:00:00.000Z",
      interval: "hour",
    });
    expect(report.totals).toMatchObject({ span_count: 4, error_count: 2, total_tokens: 45 });
    expect(column(report.series, "start")).toEqual([
      "2026-11-01T09:00:00.000Z",
      "2026-11-01T10:00:00.000Z",
    ]);
    expect(column(report.series, "trace_count")).toEqual([2, 0]);
    const byTag = await json(
      "/analytics/performance?from=2026-11-01T09:00:00Z&to=2026-11-01T10:00:00Z&interval=hour&group_by=tag",
    );
    expect(
      byTag.groups.map((group: { key: string; series: Bucket[] }) => [
        group.key,
        column(group.series, "span_count"),
        column(group.series, "p50_ms"),
      ]),
    ).toEqual([
      ["prod", [4], [60]],
      ["beta", [2], [60]],
    ]);
  });

  it("counts only the hours of a period of instants that crosses midnight", async () => {
    const query = "from=2026-11-01T23:00:00Z&to=2026-11-02T01:00:00Z";
    const metrics = await json(`/analytics/metrics?${query}`);
    expect(metrics).toMatchObject({
      period_start: "2026-11-01",
      period_end: "2026-11-02",
      from: "2026-11-01T23:00:00.000Z",
      to: "2026-11-02T01:00:00.000Z",
    });
    expect(metrics).not.toHaveProperty("series");
    expect(metrics.totals.span_count).toBe(4);
    const performance = await json(`/analytics/performance?${query}`);
    // 20, 80, 300, 400 ms.
    expect(performance.totals).toMatchObject({ span_count: 4, p50_ms: 80, max_ms: 400 });
    const costs = await json(`/analytics/costs?${query}&interval=day`);
    expect(column(costs.series, "start")).toEqual([dayStarts[0], dayStarts[1]]);
    expect(column(costs.series, "cost_usd")).toEqual([0.03, 0.04]);
  });

  it("gives the 24 hours of a day asked for by date with interval=hour", async () => {
    const report = await json(
      "/analytics/metrics?period_start=2026-11-01&period_end=2026-11-01&interval=hour",
    );
    expect(report.series).toHaveLength(24);
    expect(report.series[9]).toMatchObject({ span_count: 4, trace_count: 2 });
    expect(report.series[23]).toMatchObject({ span_count: 2, trace_count: 1 });
    expect((column(report.series, "span_count") as number[]).reduce((a, b) => a + b, 0)).toBe(6);
  });

  it("answers as its documented schema says (the OpenAPI document is made from it)", async () => {
    const query = `${days}&interval=day&group_by=tag`;
    for (const [report, schema] of [
      ["metrics", metricsReportSchema],
      ["costs", costReportSchema],
      ["performance", performanceReportSchema],
    ] as const) {
      const answer = await json(`/analytics/${report}?${query}`);
      // Parsing drops what the schema does not name: nothing is dropped.
      expect(schema.parse(answer), report).toEqual(answer);
    }
  });

  it("answers as before without interval, from or to", async () => {
    const metrics = await json(`/analytics/metrics?${days}&group_by=model`);
    expect(Object.keys(metrics)).toEqual([
      "period_start",
      "period_end",
      "group_by",
      "kind",
      "service",
      "totals",
      "groups",
    ]);
    expect(Object.keys(metrics.groups[0])).not.toContain("series");
    const costs = await json(`/analytics/costs?${days}`);
    expect(costs).not.toHaveProperty("series");
    expect(costs).not.toHaveProperty("from");
  });

  it("adds the spans stored after an earlier call to their hour", async () => {
    const query = "from=2026-11-03T05:00:00Z&to=2026-11-03T07:00:00Z&interval=hour";
    expect(column((await json(`/analytics/metrics?${query}`)).series, "span_count")).toEqual([
      0, 0,
    ]);
    server.ingest("a", [
      spanAt("2026-11-03T06:59:59.999Z", 7, {
        trace_id: `tr_${"6".repeat(32)}`,
        kind: "llm",
        model: "gpt-4o",
        cost_usd: 0.5,
      }),
    ]);
    const after = await json(`/analytics/metrics?${query}`);
    expect(column(after.series, "span_count")).toEqual([0, 1]);
    expect(column(after.series, "trace_count")).toEqual([0, 1]);
    const costs = await json(`/analytics/costs?${query}`);
    expect(column(costs.series, "cost_usd")).toEqual([0, 0.5]);
  });

  it.each([
    [
      "from=2026-11-01T00:00:00Z&period_start=2026-11-01",
      /^give the period as period_start and period_end \(dates\) or as from and to \(instants\), not both$/,
    ],
    ["from=yesterday", /query parameter "from": must be an ISO 8601 date and time/],
    ["to=2026-11-01", /query parameter "to": must be an ISO 8601 date and time/],
    [
      "from=2026-11-02T00:00:00Z&to=2026-11-01T12:00:00Z",
      /^from \(2026-11-02T00:00:00Z\) is not before to \(2026-11-01T12:00:00Z\)$/,
    ],
    ["interval=week", /query parameter "interval": must be one of hour, day/],
    [
      "period_start=2026-01-01&period_end=2026-12-31&interval=hour",
      /^interval=hour would give 8760 buckets, more than 1000: choose a shorter period or interval=day$/,
    ],
    [
      "period_start=2020-01-01&period_end=2026-12-31&interval=day",
      /^interval=day would give 2557 buckets, more than 1000: choose a shorter period$/,
    ],
  ])("answers 400 to %s, and the data stays as it was", async (query, message) => {
    const before = await json(`/analytics/metrics?${days}`);
    for (const report of ["metrics", "costs", "performance"]) {
      const response = await server.get(`/analytics/${report}?${query}`);
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toBe("invalid_request");
      expect(body.message).toMatch(message);
    }
    expect(await json(`/analytics/metrics?${days}`)).toEqual(before);
  });
});
