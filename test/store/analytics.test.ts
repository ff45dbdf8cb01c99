// Analytics on both engines: the metrics, cost and performance reports of a period, by every
// grouping, filter and interval, with nearest-rank percentiles, traces counted by their root,
// usage from model calls only (the cases of test/server/analytics-*.test.ts, at the store); a
// retried batch counted once; the same answers as SQLite's on varied spans; hostile group
// values; and two clients (two instances of the service) storing spans of the same hours at
// once, then reading each other's at once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { seededRandom } from "../../bench/support/spans.js";
import type { ExportBatch } from "../../src/core/wire/index.js";
import { parseExportBatch } from "../../src/server/ingest/parse-export-batch.js";
import { analyticsQuerySchemas } from "../../src/server/routes/analytics.js";
import { resolveAnalyticsPeriod } from "../../src/server/routes/analytics-period.js";
import type { AnalyticsQuery } from "../../src/server/store/analytics.js";
import { openDatabase } from "../../src/server/store/database.js";
import { spansPerPart } from "../../src/server/store/postgres/analytics.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { sqliteStore } from "../../src/server/store/sqlite-store.js";
import type { Store } from "../../src/server/store/store.js";
import { noLatency, spanAt } from "../server/analytics-helpers.js";
import { period, periodReports, periodSpans, seriesSpans } from "../server/analytics-spans.js";
import { resource } from "../server/helpers.js";
import { eachEngine } from "./engines.js";
import { traceIdOf } from "./span-fixtures.js";

const project = "prj_analytics";
const other = "prj_analytics_other";

type Report = keyof typeof analyticsQuerySchemas;

/** The query a report's route makes of `search` (its query string). */
function queryOf(report: Report, search: string): AnalyticsQuery {
  const parsed = analyticsQuerySchemas[report].parse(
    Object.fromEntries(new URLSearchParams(search)),
  );
  return {
    ...resolveAnalyticsPeriod(parsed),
    groupBy: parsed.group_by,
    kind: parsed.kind,
    service: parsed.service,
  };
}

const metricsOf = (store: Store, search: string, projectId = project) =>
  store.analytics.metrics(projectId, queryOf("metrics", search));
const costsOf = (store: Store, search: string, projectId = project) =>
  store.analytics.costs(projectId, queryOf("costs", search));
const performanceOf = (store: Store, search: string, projectId = project) =>
  store.analytics.performance(projectId, queryOf("performance", search));
const reports = { metrics: metricsOf, costs: costsOf, performance: performanceOf };

/** Spans in the export format (spanAt's), as POST /traces would store them from `service`. */
function batchOf(spans: Array<Record<string, unknown>>, service = "test"): ExportBatch {
  return parseExportBatch({ resource: { ...resource, service_name: service }, spans });
}

async function storePeriod(store: Store): Promise<void> {
  const spans = periodSpans();
  await store.spans.ingest(project, batchOf(spans.a));
  await store.spans.ingest(other, batchOf(spans.b));
}

/** Nearest-rank percentiles of durations in milliseconds, as the reports give them. */
function latencyOf(durationsMs: readonly number[]) {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const rank = (percent: number) =>
    sorted[Math.max(1, Math.ceil((percent * sorted.length) / 100)) - 1] as number;
  const sum = sorted.reduce((total, ms) => total + Math.round(ms * 1000), 0);
  return {
    span_count: sorted.length,
    mean_ms: Math.round(sum / sorted.length) / 1000,
    p50_ms: rank(50),
    p95_ms: rank(95),
    p99_ms: rank(99),
    max_ms: rank(100),
  };
}

type Bucket = Record<string, unknown>;
const column = (series: readonly Bucket[] | undefined, field: string) =>
  (series ?? []).map((bucket) => bucket[field]);

/**
 * Varied batches over 2026-11-01..03: every kind, names, models and versions with nulls, two
 * services, tags repeated on a span, errors, usage and fractional costs on every kind, roots of
 * each sort (no parent, cairn.root true or 1, and "true", which is not one), durations with
 * fractions of a microsecond, and one hour of one group with more spans than a rollup part.
 */
function variedBatches(): ExportBatch[] {
  const random = seededRandom(16);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
  const kinds = ["llm", "tool", "agent", "retrieval", "embedding", "chain"] as const;
  const batches: ExportBatch[] = [];
  let traceIndex = 0;
  for (let batch = 0; batch < 12; batch++) {
    const spans = Array.from({ length: 80 }, () => {
      const startMs = Date.parse("2026-11-01T00:00:00Z") + Math.floor(random() * 3 * 86_400_000);
      const marked = pick([null, null, true, 1, "true"] as const);
      return spanAt(
        new Date(startMs).toISOString(),
        Math.round(random() * 5_000_000) / 1000 + 0.0004,
        {
          trace_id: traceIdOf("c", traceIndex++),
          parent_span_id: marked === null && random() < 0.5 ? null : "eeeeeeeeeeeeeeee",
          attributes: marked === null ? {} : { "cairn.root": marked },
          kind: pick(kinds),
          name: pick(["plan", "search", "answer"]),
          model: pick([null, "gpt-4o", "claude"]),
          version: pick([null, "1.0", "2.0"]),
          status: random() < 0.1 ? "error" : "ok",
          tags: pick([[], ["prod"], ["prod", "beta", "prod"], ["eu"]]),
          usage:
            random() < 0.7
              ? {
                  prompt_tokens: Math.floor(random() * 1000),
                  completion_tokens: Math.floor(random() * 500),
                  total_tokens: 1500,
                }
              : null,
          cost_usd: random() < 0.8 ? random() / 100 : null,
        },
      );
    });
    batches.push(batchOf(spans, pick(["support-bot", "billing-bot"])));
  }
  for (let batch = 0; batch < 4; batch++) {
    const spans = Array.from({ length: Math.ceil(spansPerPart / 2) }, (_, index) =>
      spanAt(
        new Date(Date.parse("2026-11-02T15:00:00Z") + batch * 60_000 + index).toISOString(),
        1 + ((index * 37 + batch) % 400),
        { kind: "llm", name: "hot", model: "gpt-4o", tags: ["hot"], cost_usd: 0.0001 },
      ),
    );
    batches.push(batchOf(spans, "support-bot"));
  }
  return batches;
}

/** Every grouping, interval and filter, over periods of days and of hours that cut days. */
function variedQueries(): Array<[Report, string]> {
  const periods = [
    "period_start=2026-11-01&period_end=2026-11-03",
    "period_start=2026-11-02&period_end=2026-11-02&interval=hour",
    "from=2026-11-01T13:20:00Z&to=2026-11-03T04:00:00Z",
    "from=2026-11-01T13:00:00Z&to=2026-11-03T04:00:00Z&interval=day",
    "from=2026-11-02T14:00:00Z&to=2026-11-02T17:00:00Z&interval=hour",
  ];
  const groupings = ["model", "version", "kind", "tag", "name", "service", "day"];
  const queries: Array<[Report, string]> = [];
  for (const report of ["metrics", "costs", "performance"] as const) {
    for (const periodQuery of periods) {
      for (const groupBy of groupings) queries.push([report, `${periodQuery}&group_by=${groupBy}`]);
    }
    queries.push([report, `${periods[0]}&group_by=tag&kind=llm`]);
    queries.push([report, `${periods[3]}&group_by=model&service=billing-bot`]);
    queries.push([report, `${periods[2]}&group_by=tag&kind=tool&service=support-bot`]);
  }
  return queries;
}

/** A SQLite store in a temporary folder, the reference the other engine must agree with. */
function sqliteReference(): { store: Store; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "cairn-analytics-reference-"));
  const db = openDatabase(join(dir, "cairn.db"));
  return {
    store: sqliteStore(db, new SpanStore(db)),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

eachEngine("analytics", (engine) => {
  it("counts spans, errors and tokens per group, usage from model calls only", async (context) => {
    const store = await engine.open(context);
    await storePeriod(store);
    expect(await metricsOf(store, `${period}&group_by=model`)).toEqual(
      periodReports.metricsByModel,
    );
  });

  it("groups by UTC day, tag, version, kind, name and service, and filters by kind and service", async (context) => {
    const store = await engine.open(context);
    await storePeriod(store);
    await store.spans.ingest(
      project,
      batchOf([spanAt("2026-11-02T08:00:00Z", 3, { kind: "tool", name: "search" })], "billing"),
    );
    // A tag listed twice on a span counts once; a span with two tags is in both groups.
    const groups: Record<string, Array<[string | null, number]>> = {
      "group_by=day": [
        ["2026-11-01", 102],
        ["2026-11-02", 3],
      ],
      "group_by=day&kind=tool": [
        ["2026-11-01", 2],
        ["2026-11-02", 3],
      ],
      "group_by=tag": [
        ["prod", 100],
        ["beta", 24],
      ],
      "group_by=version": [
        ["1.0.0", 100],
        ["1.1.0", 4],
        [null, 1],
      ],
      "group_by=kind": [
        ["llm", 100],
        ["tool", 5],
      ],
      "group_by=name": [
        ["draft", 100],
        ["search", 5],
      ],
      "group_by=service": [
        ["test", 104],
        ["billing", 1],
      ],
    };
    for (const [search, expected] of Object.entries(groups)) {
      const report = await metricsOf(store, `${period}&${search}`);
      expect(
        report.groups.map((group) => [group.key, group.span_count]),
        search,
      ).toEqual(expected);
    }
    const billing = await metricsOf(store, `${period}&service=billing&group_by=tag`);
    expect(billing).toMatchObject({ service: "billing", groups: [] });
    expect(billing.totals.span_count).toBe(1);
  });

  it("reports USD cost per group with its days, and per day", async (context) => {
    const store = await engine.open(context);
    await storePeriod(store);
    expect(await costsOf(store, period)).toEqual(periodReports.costsByModel);
    const byTag = await costsOf(store, `${period}&group_by=tag`);
    expect(byTag.groups.map((group) => [group.key, group.cost_usd, group.span_count])).toEqual([
      ["prod", 0.1, 100],
      ["beta", 0.02, 24],
    ]);
  });

  it("computes nearest-rank latency percentiles per group, and none for an empty period", async (context) => {
    const store = await engine.open(context);
    await storePeriod(store);
    expect(await performanceOf(store, period)).toEqual(periodReports.performanceByKind);
    const byTag = await performanceOf(store, `${period}&group_by=tag`);
    expect(byTag.groups[1]).toEqual(periodReports.betaLatency);
    const empty = await performanceOf(store, "period_start=2025-01-01&period_end=2025-01-31");
    expect(empty.totals).toEqual(noLatency);
    expect(empty.groups).toEqual([]);
  });

  it("includes both ends of the period, and shows each project only its own spans", async (context) => {
    const store = await engine.open(context);
    await storePeriod(store);
    const count = async (search: string) => (await metricsOf(store, search)).totals.span_count;
    expect(await count("period_start=2026-10-31&period_end=2026-10-31")).toBe(1);
    expect(await count("period_start=2026-11-03&period_end=2026-11-03")).toBe(1);
    expect(await count("period_start=2026-10-31&period_end=2026-11-03")).toBe(106);
    expect(await count("period_start=2026-11-02&period_end=2026-11-02")).toBe(2);
    expect(
      (await costsOf(store, "period_start=2026-10-31&period_end=2026-11-03")).total_cost_usd,
    ).toBe(2.1);
    const theirs = await costsOf(store, period, other);
    expect(theirs.total_cost_usd).toBe(5);
    expect(theirs.groups.map((group) => [group.key, group.span_count])).toEqual([["gpt-4o", 1]]);
    expect((await performanceOf(store, period, other)).totals).toMatchObject({
      span_count: 1,
      p99_ms: 7,
    });
    expect((await metricsOf(store, period, "prj_nobody")).totals.span_count).toBe(0);
  });

  it("gives every day and hour of a series, with traces counted by their root", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(seriesSpans()));
    const days = "period_start=2026-11-01&period_end=2026-11-04";
    const byDay = await metricsOf(store, `${days}&interval=day&group_by=model`);
    expect(byDay).toMatchObject({ to: "2026-11-05T00:00:00.000Z", interval: "day" });
    // The root with a host parent (cairn.root) counts as its trace's root; only model calls
    // add tokens.
    expect(
      ["trace_count", "span_count", "error_count", "total_tokens"].map((field) =>
        column(byDay.series, field),
      ),
    ).toEqual([
      [3, 1, 0, 1],
      [6, 2, 0, 2],
      [2, 0, 0, 0],
      [90, 60, 0, 75],
    ]);
    const costs = await costsOf(store, `${days}&interval=day&group_by=version`);
    expect(column(costs.series, "cost_usd")).toEqual([0.06, 0.04, 0, 0.05]);
    const latency = await performanceOf(store, `${days}&interval=day&group_by=kind`);
    // 2026-11-01: 40, 60, 80, 100, 200, 300 ms.
    expect(latency.series?.[0]).toMatchObject({ mean_ms: 130, p50_ms: 80, p95_ms: 300 });
    const llm = latency.groups.find((group) => group.key === "llm");
    expect(column(llm?.series, "p50_ms")).toEqual([60, 20, null, 10]);
    const hours = await metricsOf(
      store,
      "period_start=2026-11-01&period_end=2026-11-01&interval=hour",
    );
    expect(column(hours.series, "span_count").filter((count) => count !== 0)).toEqual([4, 2]);
    expect([hours.series?.[9]?.trace_count, hours.series?.[23]?.trace_count]).toEqual([2, 1]);
  });

  it("cuts hours out of days: from rounded down, to rounded up, across midnight", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(seriesSpans()));
    const morning = await metricsOf(
      store,
      "from=2026-11-01T09:10:00Z&to=2026-11-01T10:05:00Z&interval=hour",
    );
    expect(morning.totals).toMatchObject({ span_count: 4, total_tokens: 45 });
    expect(column(morning.series, "trace_count")).toEqual([2, 0]);
    const midnight = "from=2026-11-01T23:00:00Z&to=2026-11-02T01:00:00Z";
    expect((await metricsOf(store, midnight)).totals.span_count).toBe(4);
    // 20, 80, 300, 400 ms.
    expect((await performanceOf(store, midnight)).totals).toMatchObject({
      p50_ms: 80,
      max_ms: 400,
    });
    const costs = await costsOf(store, `${midnight}&interval=day`);
    expect(column(costs.series, "cost_usd")).toEqual([0.03, 0.04]);
  });

  it("counts a retried batch once, and spans stored after an earlier report", async (context) => {
    const store = await engine.open(context);
    const batch = batchOf(seriesSpans());
    await store.spans.ingest(project, batch);
    const days = "period_start=2026-11-01&period_end=2026-11-04";
    const before = await performanceOf(store, `${days}&group_by=tag&interval=day`);
    expect(await store.spans.ingest(project, batch)).toEqual({ accepted: 0, duplicates: 10 });
    expect(await performanceOf(store, `${days}&group_by=tag&interval=day`)).toEqual(before);
    await store.spans.ingest(
      project,
      batchOf([spanAt("2026-11-03T06:59:59.999Z", 7, { kind: "llm", cost_usd: 0.5 })]),
    );
    const after = await costsOf(
      store,
      "from=2026-11-03T05:00:00Z&to=2026-11-03T07:00:00Z&interval=hour",
    );
    expect(column(after.series, "cost_usd")).toEqual([0, 0.5]);
  });

  it("keeps every duration of an hour with more spans than a rollup part", async (context) => {
    const store = await engine.open(context);
    const durations: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const spans = Array.from({ length: Math.ceil(spansPerPart * 0.7) }, (_, index) => {
        const ms = ((index * 7919 + batch * 104_729) % 100_000) / 100;
        durations.push(ms);
        return spanAt(`2026-11-05T07:0${batch}:00Z`, ms, {
          kind: "llm",
          model: "gpt-4o",
          tags: ["hot"],
        });
      });
      await store.spans.ingest(project, batchOf(spans));
    }
    const day = "period_start=2026-11-05&period_end=2026-11-05";
    const hour = "from=2026-11-05T07:00:00Z&to=2026-11-05T08:00:00Z";
    for (const search of [day, hour, `${day}&group_by=tag`, `${hour}&interval=hour`]) {
      const report = await performanceOf(store, search);
      expect(report.totals, search).toEqual(latencyOf(durations));
      expect(report.groups[0], search).toMatchObject(latencyOf(durations));
    }
  });

  it("keeps hostile group values apart, bound as values", async (context) => {
    const store = await engine.open(context);
    const names = ['x","y', "x", 'x\\",\\"y', "'); DROP TABLE spans; --", "a\u0000b"];
    const service = "svc' OR '1'='1";
    await store.spans.ingest(
      project,
      batchOf(
        names.map((name, index) =>
          spanAt("2026-11-06T10:00:00Z", index + 1, {
            name,
            tags: [name, `${name} `],
            version: name,
          }),
        ),
        service,
      ),
    );
    const day = "period_start=2026-11-06&period_end=2026-11-06";
    // PostgreSQL keeps a NUL as U+FFFD (storable-values.ts); SQLite keeps it.
    const stored = (name: string) =>
      engine.name === "postgres" ? name.replaceAll("\u0000", "\uFFFD") : name;
    const byName = await metricsOf(store, `${day}&group_by=name`);
    expect(byName.groups.map((group) => [group.key, group.span_count]).sort()).toEqual(
      names.map((name) => [stored(name), 1]).sort(),
    );
    const byTag = await metricsOf(store, `${day}&group_by=tag`);
    expect(byTag.groups).toHaveLength(names.length * 2);
    expect(byTag.groups.every((group) => group.span_count === 1)).toBe(true);
    expect((await costsOf(store, `${day}&group_by=version`)).groups).toHaveLength(names.length);
    expect((await metricsOf(store, `${day}&service=svc`)).totals.span_count).toBe(0);
    const quoted = `${day}&service=${encodeURIComponent(service)}`;
    expect((await metricsOf(store, quoted)).totals.span_count).toBe(names.length);
  });

  it("answers as SQLite does, report for report, on varied spans", async (context) => {
    const store = await engine.open(context);
    const reference = sqliteReference();
    try {
      const batches = variedBatches();
      for (const batch of batches) {
        const result = await store.spans.ingest(project, batch);
        expect(result).toEqual(await reference.store.spans.ingest(project, batch));
      }
      // Some batches again: duplicates only.
      for (const batch of batches.slice(3, 6)) {
        expect((await store.spans.ingest(project, batch)).accepted).toBe(0);
      }
      for (const [report, search] of variedQueries()) {
        expect(await reports[report](store, search), `${report}?${search}`).toEqual(
          await reports[report](reference.store, search),
        );
      }
    } finally {
      reference.close();
    }
  });

  it("two clients storing the same spans at once count each once, and read each other's at once", async (context) => {
    const first = await engine.open(context);
    const second = await engine.openSecondClient();
    const day = "period_start=2026-11-07&period_end=2026-11-07";
    const durations: number[] = [];
    const batches = Array.from({ length: 8 }, (_, batch) =>
      batchOf(
        Array.from({ length: 60 }, (_, index) => {
          const ms = 1 + (((batch * 60 + index) * 7) % 997);
          durations.push(ms);
          return spanAt(`2026-11-07T12:00:${String(index).padStart(2, "0")}Z`, ms, {
            trace_id: traceIdOf("d", batch * 60 + index),
            kind: "llm",
            model: "gpt-4o",
            tags: ["prod", "hot"],
            usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
          });
        }),
      ),
    );
    // Every batch sent to both clients at once, and the batches all at once: the same hour's
    // cells written by several transactions together.
    const results = await Promise.all(
      batches.flatMap((batch) => [
        first.spans.ingest(project, batch),
        second.spans.ingest(project, batch),
      ]),
    );
    expect(results.reduce((sum, result) => sum + result.accepted, 0)).toBe(480);
    for (const store of [first, second]) {
      const metrics = await metricsOf(store, `${day}&group_by=tag`);
      expect(metrics.totals).toMatchObject({ span_count: 480, total_tokens: 1440 });
      expect(metrics.groups.map((group) => [group.key, group.span_count])).toEqual([
        ["hot", 480],
        ["prod", 480],
      ]);
      const performance = await performanceOf(store, `${day}&group_by=tag`);
      expect(performance.totals).toEqual(latencyOf(durations));
    }
    // Stored through one, in the other's next report.
    await first.spans.ingest(project, batchOf([spanAt("2026-11-07T13:00:00Z", 5000)]));
    expect((await performanceOf(second, day)).totals).toMatchObject({
      span_count: 481,
      max_ms: 5000,
    });
  });

  it("keeps every span of many transactions that fill and close parts of one cell at once", async (context) => {
    const [first, second] = [await engine.open(context), await engine.openSecondClient()];
    const durations = Array.from({ length: 12 * spansPerPart }, (_, index) => 1 + index / 10);
    const spans = durations.map((ms, index) =>
      spanAt(`2026-11-08T09:${String(index % 60).padStart(2, "0")}:00Z`, ms, {
        trace_id: traceIdOf("e", index),
        kind: "tool",
        name: "lookup",
        tags: ["hot"],
      }),
    );
    // Each batch fills a part by itself, so that the transactions, each appending to a part
    // of its own, close parts of the same cells at once and must number them apart.
    const batches = Array.from({ length: 12 }, (_, batch) =>
      batchOf(spans.slice(batch * spansPerPart, (batch + 1) * spansPerPart)),
    );
    const results = await Promise.all(
      batches.flatMap((batch) => [
        first.spans.ingest(project, batch),
        second.spans.ingest(project, batch),
      ]),
    );
    const total = batches.length * spansPerPart;
    expect(results.reduce((sum, result) => sum + result.accepted, 0)).toBe(total);
    const day = "period_start=2026-11-08&period_end=2026-11-08";
    const hour = "from=2026-11-08T09:00:00Z&to=2026-11-08T10:00:00Z&interval=hour";
    for (const store of [first, second]) {
      for (const search of [day, `${day}&group_by=tag`, hour]) {
        const report = await performanceOf(store, search);
        expect(report.totals, search).toEqual(latencyOf(durations));
        expect((await metricsOf(store, search)).totals.span_count, search).toBe(total);
      }
    }
    // And the cells take more spans after, from one transaction at a time.
    await first.spans.ingest(project, batchOf([spanAt("2026-11-08T09:30:00Z", 9000)]));
    expect((await performanceOf(second, hour)).totals).toMatchObject({
      span_count: total + 1,
      max_ms: 9000,
    });
  });
});
