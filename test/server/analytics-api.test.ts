import { ApiRequestError, ConfigurationError, configure, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getCosts, getMetrics, getPerformance } from "../../src/tracing/client/analytics.js";
import {
  type AnalyticsServer,
  keyA,
  keyB,
  noLatency,
  spanAt,
  startAnalyticsServer,
} from "./analytics-helpers.js";
import { period, periodReports, periodSpans } from "./analytics-spans.js";

describe("GET /analytics/metrics, /costs and /performance", () => {
  let server: AnalyticsServer;
  const json = async (path: string, key?: string) => {
    const response = await server.get(path, key);
    expect(response.status).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    server = await startAnalyticsServer();
    const spans = periodSpans();
    server.ingest("a", spans.a);
    server.ingest("b", spans.b);
  });
  afterAll(async () => {
    await server.close();
  });

  it("counts spans, errors and tokens per model", async () => {
    expect(await json(`/analytics/metrics?${period}&group_by=model`)).toEqual(
      periodReports.metricsByModel,
    );
  });

  it("groups by UTC day by default, across midnight", async () => {
    const report = await json(`/analytics/metrics?${period}`);
    expect(report.group_by).toBe("day");
    expect(report.groups).toEqual([
      expect.objectContaining({ key: "2026-11-01", span_count: 102, error_count: 10 }),
      expect.objectContaining({
        key: "2026-11-02",
        span_count: 2,
        error_count: 1,
        error_rate: 0.5,
      }),
    ]);
    const tools = await json(`/analytics/metrics?${period}&kind=tool`);
    expect(tools.kind).toBe("tool");
    expect(tools.totals.span_count).toBe(4);
    expect(tools.groups.map((group: { span_count: number }) => group.span_count)).toEqual([2, 2]);
  });

  it("groups by each tag of a span, by version, kind and name", async () => {
    const tags = await json(`/analytics/metrics?${period}&group_by=tag`);
    expect(tags.totals.span_count).toBe(104);
    expect(tags.groups).toEqual([
      expect.objectContaining({
        key: "prod",
        span_count: 100,
        error_count: 10,
        total_tokens: 1500,
      }),
      // A tag listed twice on a span counts once.
      expect.objectContaining({ key: "beta", span_count: 24, error_count: 3, error_rate: 0.125 }),
    ]);
    const keysAndCounts = async (groupBy: string) =>
      (await json(`/analytics/metrics?${period}&group_by=${groupBy}`)).groups.map(
        (group: { key: string; span_count: number }) => [group.key, group.span_count],
      );
    expect(await keysAndCounts("version")).toEqual([
      ["1.0.0", 100],
      ["1.1.0", 4],
    ]);
    expect(await keysAndCounts("kind")).toEqual([
      ["llm", 100],
      ["tool", 4],
    ]);
    expect(await keysAndCounts("name")).toEqual([
      ["draft", 100],
      ["search", 4],
    ]);
  });

  it("reports USD cost per group with its days, and per day", async () => {
    expect(await json(`/analytics/costs?${period}`)).toEqual(periodReports.costsByModel);
    const byTag = await json(`/analytics/costs?${period}&group_by=tag`);
    expect(byTag.groups.map((group: { key: string; cost_usd: number }) => group.key)).toEqual([
      "prod",
      "beta",
    ]);
    expect(byTag.groups[1]).toMatchObject({ cost_usd: 0.02, span_count: 24 });
    const byDay = await json(`/analytics/costs?${period}&group_by=day`);
    expect(byDay.groups.map((group: { key: string }) => group.key)).toEqual([
      "2026-11-01",
      "2026-11-02",
    ]);
  });

  it("computes nearest-rank latency percentiles per kind by default", async () => {
    expect(await json(`/analytics/performance?${period}`)).toEqual(periodReports.performanceByKind);
    const byTag = await json(`/analytics/performance?${period}&group_by=tag`);
    expect(byTag.groups[1]).toEqual(periodReports.betaLatency);
    const empty = await json(
      "/analytics/performance?period_start=2025-01-01&period_end=2025-01-31",
    );
    expect(empty.totals).toEqual(noLatency);
    expect(empty.groups).toEqual([]);
  });

  it("includes both ends of the period, by span start in UTC", async () => {
    const count = async (query: string) =>
      (await json(`/analytics/metrics?${query}`)).totals.span_count;
    expect(await count("period_start=2026-10-31&period_end=2026-10-31")).toBe(1);
    expect(await count("period_start=2026-11-03&period_end=2026-11-03")).toBe(1);
    expect(await count("period_start=2026-10-31&period_end=2026-11-03")).toBe(106);
    expect(await count("period_start=2026-11-02&period_end=2026-11-02")).toBe(2);
    const costs = await json("/analytics/costs?period_start=2026-10-31&period_end=2026-11-03");
    expect(costs.total_cost_usd).toBe(2.1);
  });

  it("shows each project only its own spans", async () => {
    const other = await json(`/analytics/costs?${period}`, keyB);
    expect(other.total_cost_usd).toBe(5);
    expect(other.groups).toEqual([
      {
        key: "gpt-4o",
        cost_usd: 5,
        span_count: 1,
        days: [{ date: "2026-11-01", cost_usd: 5, span_count: 1 }],
      },
    ]);
    const performance = await json(`/analytics/performance?${period}`, keyB);
    expect(performance.totals).toMatchObject({ span_count: 1, p99_ms: 7 });
  });

  it("counts spans stored after an earlier call", async () => {
    const december = "period_start=2026-12-05&period_end=2026-12-05";
    expect((await json(`/analytics/metrics?${december}`)).totals.span_count).toBe(0);
    server.ingest("a", [spanAt("2026-12-05T08:00:00Z", 30, { kind: "llm", cost_usd: 0.25 })]);
    expect((await json(`/analytics/metrics?${december}`)).totals.span_count).toBe(1);
    expect((await json(`/analytics/costs?${december}`)).total_cost_usd).toBe(0.25);
    expect((await json(`/analytics/performance?${december}`)).totals.p50_ms).toBe(30);
  });

  it.each(["metrics", "costs", "performance"])(
    "/analytics/%s answers 400 to an unknown group_by, naming the allowed ones",
    async (report) => {
      const response = await server.get(`/analytics/${report}?${period}&group_by=colour`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: "invalid_request",
        message:
          'query parameter "group_by": must be one of model, version, kind, tag, name, service, day',
      });
    },
  );

  it.each([
    ["period_start=2026-13-01", /query parameter "period_start": is not a real date/],
    ["period_end=01-11-2026", /query parameter "period_end": must be a date as YYYY-MM-DD/],
    [
      "period_start=2026-11-05&period_end=2026-11-01",
      /^period_start \(2026-11-05\) is after period_end \(2026-11-01\)$/,
    ],
    ["kind=database", /query parameter "kind"/],
    ["colour=red", /query parameter "colour" is not supported/],
  ])("answers 400 to %s", async (query, message) => {
    const response = await server.get(`/analytics/performance?${query}`);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe("invalid_request");
    expect(body.message).toMatch(message);
  });

  it("answers 401 without a valid key", async () => {
    const response = await fetch(`${server.url}/analytics/metrics`);
    expect(response.status).toBe(401);
    expect((await server.get("/analytics/costs", "not-a-key-0123456789")).status).toBe(401);
  });

  describe("SDK: getMetrics, getCosts, getPerformance", () => {
    beforeAll(() => {
      configure({ endpoint: server.url, apiKey: keyA, exporter: memoryExporter() });
    });
    afterAll(async () => {
      await shutdown();
    });

    it("take startDate/endDate (strings or Dates) and groupBy", async () => {
      const metrics = await getMetrics({
        startDate: "2026-11-01",
        endDate: new Date("2026-11-02T18:30:00Z"),
        groupBy: "model",
      });
      expect(metrics).toEqual(await json(`/analytics/metrics?${period}&group_by=model`));
      const performance = await getPerformance({
        startDate: new Date("2026-11-01T00:00:00Z"),
        endDate: "2026-11-02",
        kind: "llm",
      });
      expect(performance.group_by).toBe("kind");
      expect(performance.groups).toEqual([periodReports.performanceByKind.groups[0]]);
    });

    it("take period_start/period_end and group_by", async () => {
      const costs = await getCosts({
        period_start: "2026-11-01",
        period_end: "2026-11-02",
        group_by: "day",
      });
      expect(costs).toMatchObject({
        period_start: "2026-11-01",
        period_end: "2026-11-02",
        group_by: "day",
        total_cost_usd: 0.1,
      });
      expect(costs.groups.map((group) => [group.key, group.cost_usd])).toEqual([
        ["2026-11-01", 0.1],
        ["2026-11-02", 0],
      ]);
    });

    it("reject bad options before calling, and carry the service's errors", async () => {
      await expect(getMetrics({ groupBy: "colour" as never })).rejects.toThrow(
        'getMetrics(): option "groupBy": must be one of model, version, kind, tag, name, service, day',
      );
      await expect(
        getCosts({ startDate: "2026-11-01", period_start: "2026-11-01" }),
      ).rejects.toThrow("give startDate or period_start, not both");
      await expect(getPerformance({ endDate: "2026-02-30" })).rejects.toThrow(
        'option "endDate": is not a real date',
      );
      await expect(getMetrics({ colour: "red" } as never)).rejects.toBeInstanceOf(
        ConfigurationError,
      );
      const error = await getMetrics({ startDate: "2026-11-05", endDate: "2026-11-01" }).catch(
        (caught: unknown) => caught,
      );
      expect(ApiRequestError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        status: 400,
        code: "invalid_request",
        message: "period_start (2026-11-05) is after period_end (2026-11-01)",
      });
    });
  });
});

describe("the analytics view under concurrent first calls", () => {
  let server: AnalyticsServer;
  beforeAll(async () => {
    server = await startAnalyticsServer();
    // More spans than one loading step reads, so the first calls overlap while loading.
    const spans = Array.from({ length: 45_000 }, (_, index) =>
      spanAt(
        new Date(Date.parse("2026-11-10T00:00:00Z") + index * 1000).toISOString(),
        1 + (index % 100),
        {
          input: null,
          output: null,
        },
      ),
    );
    for (let start = 0; start < spans.length; start += 5000) {
      server.ingest("a", spans.slice(start, start + 5000));
    }
  });
  afterAll(async () => {
    await server.close();
  });

  it("counts every span once", async () => {
    const query = "period_start=2026-11-10&period_end=2026-11-11";
    const answers = await Promise.all([
      server.get(`/analytics/metrics?${query}`),
      server.get(`/analytics/performance?${query}`),
      server.get(`/analytics/costs?${query}`),
    ]);
    const [metrics, performance, costs] = await Promise.all(answers.map((each) => each.json()));
    expect(metrics.totals.span_count).toBe(45_000);
    expect(performance.totals).toMatchObject({ span_count: 45_000, p50_ms: 50, p99_ms: 99 });
    expect(costs.days.map((day: { span_count: number }) => day.span_count)).toEqual([45_000]);
  });
});
