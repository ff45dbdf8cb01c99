// Analytics on PostgreSQL next to SQLite, on the same 1,000,000 spans (the analytics bench's
// store: 100,000 agent runs of 10 spans over 30 days): p50/p95/max of the metrics, cost and
// performance reports over the last 7 and the whole 30 days, through each engine's Store
// (in-process, the report's JSON included, no HTTP), and whether both give the same answer.
// Goal (issue 16): p95 <= 150 ms on PostgreSQL.
//
// SQLite: the analytics bench's cached store (bench/analytics.ts builds it once). PostgreSQL: a
// throwaway cluster (Debian's postgresql, test/helpers/postgres-cluster.ts) that the same
// generated batches are ingested into through the PostgreSQL store, 10,000 spans per call, as
// the SQLite store was built; the cluster is removed at the end. Cases alternate between the
// engines round by round. BENCH_ROUNDS sets the timed rounds (default 30).
//
// Run: npx tsx bench/postgres-analytics.ts (npm run bench -- postgres runs it after its ingest part).

import { join } from "node:path";
import { analyticsQuerySchemas } from "../src/server/routes/analytics.js";
import { resolveAnalyticsPeriod } from "../src/server/routes/analytics-period.js";
import { openDatabase } from "../src/server/store/database.js";
import { openPostgres } from "../src/server/store/postgres/connection.js";
import { migratePostgres } from "../src/server/store/postgres/migrations.js";
import { postgresStore } from "../src/server/store/postgres/postgres-store.js";
import { SpanStore } from "../src/server/store/span-store.js";
import { sqliteStore } from "../src/server/store/sqlite-store.js";
import type { Store } from "../src/server/store/store.js";
import { postgresMissing, startPostgresCluster } from "../test/helpers/postgres-cluster.js";
import { analyticsStore } from "./analytics.js";
import { agentRunBatches } from "./support/agent-runs.js";
import { ms, percentile, ratio, seconds, table, thousands } from "./support/report.js";

const goalMs = 150;
const warmupRounds = 3;
const timedRounds = Number(process.env.BENCH_ROUNDS ?? 30);
const dayMs = 86_400_000;

type Report = keyof typeof analyticsQuerySchemas;

interface Case {
  readonly id: string;
  readonly report: Report;
  readonly search: string;
  readonly times: Record<"sqlite" | "postgres", number[]>;
  same?: boolean;
}

function cases(periodStart: string, periodEnd: string): Case[] {
  const week = new Date(Date.parse(periodEnd) - 6 * dayMs).toISOString().slice(0, 10);
  const list: Array<[string, Report, string]> = [];
  for (const [days, start] of [
    [7, week],
    [30, periodStart],
  ] as const) {
    const period = `period_start=${start}&period_end=${periodEnd}`;
    list.push(
      [`${days}d metrics by day`, "metrics", `${period}&group_by=day`],
      [`${days}d metrics by model`, "metrics", `${period}&group_by=model`],
      [`${days}d metrics by tag, interval=day`, "metrics", `${period}&group_by=tag&interval=day`],
      [`${days}d costs by model`, "costs", `${period}&group_by=model`],
      [`${days}d costs by day`, "costs", `${period}&group_by=day`],
      [`${days}d performance by kind`, "performance", `${period}&group_by=kind`],
      [`${days}d performance by model`, "performance", `${period}&group_by=model`],
      [`${days}d performance by tag`, "performance", `${period}&group_by=tag`],
      [`${days}d performance by kind, interval=day`, "performance", `${period}&interval=day`],
    );
  }
  list.push([
    "7d performance by model, interval=hour",
    "performance",
    `period_start=${week}&period_end=${periodEnd}&group_by=model&interval=hour`,
  ]);
  return list.map(([id, report, search]) => ({
    id,
    report,
    search,
    times: { sqlite: [], postgres: [] },
  }));
}

/** The report of a case, as the route would answer it (JSON text). */
async function answer(store: Store, projectId: string, item: Case): Promise<string> {
  const parsed = analyticsQuerySchemas[item.report].parse(
    Object.fromEntries(new URLSearchParams(item.search)),
  );
  const query = {
    ...resolveAnalyticsPeriod(parsed),
    groupBy: parsed.group_by,
    kind: parsed.kind,
    service: parsed.service,
  };
  const report =
    item.report === "metrics"
      ? await store.analytics.metrics(projectId, query)
      : item.report === "costs"
        ? await store.analytics.costs(projectId, query)
        : await store.analytics.performance(projectId, query);
  return JSON.stringify(report);
}

export async function runPostgresAnalyticsBench(): Promise<void> {
  const missing = postgresMissing();
  if (missing !== undefined) {
    console.log(`postgres analytics: not measured: ${missing}`);
    return;
  }
  const started = process.hrtime.bigint();
  const cached = analyticsStore();
  const { meta } = cached;
  const db = openDatabase(join(cached.dir, "cairn.db"));
  const sqlite = sqliteStore(db, new SpanStore(db));
  const sqliteProject = (await sqlite.projects.callerForKey(meta.apiKey))?.project.id;
  if (sqliteProject === undefined) throw new Error("bench: the cached store has no project");

  const cluster = await startPostgresCluster();
  try {
    const sql = await openPostgres(await cluster.createDatabase("analytics_bench"));
    await migratePostgres(sql);
    const postgres = postgresStore(sql);
    const { project } = await postgres.projects.createProject("bench");
    const ingestStarted = process.hrtime.bigint();
    let stored = 0;
    for (const batch of agentRunBatches({
      salt: 0xa11a,
      runs: meta.traces,
      fromMs: Date.parse(`${meta.periodStart}T00:00:00Z`),
      endMs: Date.parse(meta.builtAt),
      batchSpans: 10_000,
    })) {
      stored += (await postgres.spans.ingest(project.id, batch)).accepted;
    }
    const ingestSeconds = seconds(ingestStarted);
    if (stored !== meta.spans) {
      throw new Error(`bench: PostgreSQL stored ${stored} of ${meta.spans} spans`);
    }
    await sql`VACUUM ANALYZE`;

    const all = cases(meta.periodStart, meta.periodEnd);
    const engines = [
      ["sqlite", sqlite, sqliteProject],
      ["postgres", postgres, project.id],
    ] as const;
    const firstMs: Record<string, number> = {};
    for (const [name, store, projectId] of engines) {
      const start = performance.now();
      await answer(store, projectId, all[0] as Case);
      firstMs[name] = performance.now() - start;
    }
    for (const item of all) {
      item.same =
        (await answer(sqlite, sqliteProject, item)) === (await answer(postgres, project.id, item));
    }
    for (let round = 0; round < warmupRounds + timedRounds; round++) {
      for (let index = 0; index < all.length; index++) {
        const item = all[(index + round) % all.length] as Case;
        for (const [name, store, projectId] of round % 2 === 0 ? engines : [...engines].reverse()) {
          const start = performance.now();
          await answer(store, projectId, item);
          if (round >= warmupRounds) item.times[name].push(performance.now() - start);
        }
      }
    }
    await postgres.close();

    const rows = [
      [
        "case",
        "sqlite p50",
        "p95",
        "pg p50",
        "p95",
        "max",
        "pg/sqlite p95",
        "same answer",
        "pg p95 <= 150",
      ],
    ];
    for (const item of all) {
      const sqliteP95 = percentile(item.times.sqlite, 95);
      const pgP95 = percentile(item.times.postgres, 95);
      rows.push([
        item.id,
        ms(percentile(item.times.sqlite, 50)),
        ms(sqliteP95),
        ms(percentile(item.times.postgres, 50)),
        ms(pgP95),
        ms(Math.max(...item.times.postgres)),
        ratio(pgP95 / sqliteP95),
        item.same === true ? "yes" : "NO",
        pgP95 <= goalMs ? "yes" : "NO",
      ]);
    }
    const worst = Math.max(...all.map((item) => percentile(item.times.postgres, 95)));
    const different = all.filter((item) => item.same !== true);
    console.log(
      [
        `postgres analytics: ${thousands(meta.spans)} spans (${meta.periodStart}..${meta.periodEnd}), ${timedRounds} timed rounds after ${warmupRounds}, Node ${process.version}`,
        `  PostgreSQL ${cluster.directory}: ingested through the PostgreSQL store in ${ingestSeconds.toFixed(0)} s (${thousands(meta.spans / ingestSeconds)} spans/s, 10,000 per call, one at a time, fsync off)`,
        `  first report after opening: SQLite ${ms(firstMs.sqlite ?? Number.NaN)} ms (its view loads), PostgreSQL ${ms(firstMs.postgres ?? Number.NaN)} ms`,
        "  each time: the store's report and its JSON, in this process (no HTTP)",
        "",
        table(rows),
        "",
        `goal p95 <= ${goalMs} ms on PostgreSQL: ${worst <= goalMs ? "MET" : "NOT MET"} (worst p95 ${ms(worst)} ms)`,
        `same answers on both engines: ${different.length === 0 ? "every case" : `NOT for ${different.map((item) => item.id).join(", ")}`}`,
        `took ${seconds(started).toFixed(0)} s`,
      ].join("\n"),
    );
  } finally {
    await cluster.stop();
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runPostgresAnalyticsBench();
