// Analytics latency on a store of 1,000,000 spans (100,000 traces of 10 spans over 30 days):
// p50/p95/p99 of `GET /analytics/traces` (default page, filters, sorts) and of
// `GET /analytics/performance` (group_by model, day, …), each next to a plain `GET /health` round
// trip measured in the same run. Goal (issue 3): p95 <= 150 ms.
//
// The store is built in this process through SpanStore.ingest (10,000 spans per transaction, not
// over HTTP), then cached in os.tmpdir()/cairn-bench-analytics/, keyed by the schema version and the
// generator's version: later runs reuse it (BENCH_REBUILD=1 rebuilds it; delete the folder to
// reclaim the disk). The data covers the 30 days up to the build; requests name that period
// explicitly, so a cache built on another day measures the same thing.
//
// The service runs in a child process (bench/support/serve.ts). Requests go one at a time; each
// round sends every case once, in a rotating order, so the cases share the machine's state. An
// endpoint that answers 404 is reported as not there yet; any other failure throws.

import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../src/server/store/database.js";
import { ProjectStore } from "../src/server/store/projects.js";
import { SpanStore } from "../src/server/store/span-store.js";
import { indexForSearch, storeAgentRuns } from "./support/agent-runs.js";
import { cachedStore, currentSchema } from "./support/cached-store.js";
import { mib, ms, percentile, ratio, seconds, table, thousands } from "./support/report.js";
import { startServerProcess } from "./support/server-process.js";
import { generatorVersion, spansPerTrace } from "./support/spans.js";

const goalMs = 150;

const traces = 100_000;
const days = 30;
/** Spans per SpanStore.ingest call (one transaction) while building. */
const buildBatchSpans = 10_000;
const warmupRequests = 5;
const timedRounds = 50;
const apiKey = "bench-analytics-0123456789abcdef";
const dayMs = 86_400_000;

interface StoreMeta {
  readonly schemaVersion: number;
  readonly generatorVersion: number;
  readonly apiKey: string;
  readonly spans: number;
  readonly traces: number;
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly builtAt: string;
  readonly buildSeconds: number;
}

function day(msSinceEpoch: number): string {
  return new Date(msSinceEpoch).toISOString().slice(0, 10);
}

/** Builds the store into `dir`: a project with `apiKey`, and every trace through SpanStore. */
function buildStore(dir: string, version: number): StoreMeta {
  const started = process.hrtime.bigint();
  const db = openDatabase(join(dir, "cairn.db"));
  const endMs = Date.now();
  const fromMs = Date.parse(`${day(endMs)}T00:00:00Z`) - (days - 1) * dayMs;
  try {
    const { project } = new ProjectStore(db).createProject("default", apiKey);
    writeFileSync(join(dir, "api-key"), `${apiKey}\n`, { mode: 0o600 });
    const store = new SpanStore(db);
    storeAgentRuns(store, project.id, {
      salt: 0xa11a,
      runs: traces,
      fromMs,
      endMs,
      batchSpans: buildBatchSpans,
    });
    indexForSearch(store);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return {
    schemaVersion: version,
    generatorVersion,
    apiKey,
    spans: traces * spansPerTrace,
    traces,
    periodStart: day(fromMs),
    periodEnd: day(endMs),
    builtAt: new Date(endMs).toISOString(),
    buildSeconds: seconds(started),
  };
}

/** The cached store of the current schema, built first if needed; stale versions are removed. */
export function analyticsStore() {
  const schema = currentSchema();
  return cachedStore({
    root: "cairn-bench-analytics",
    name: `analytics-1m-schema${schema.key}-gen${generatorVersion}`,
    announce: `analytics: building a store of ${thousands(traces * spansPerTrace)} spans`,
    build: (dir) => buildStore(dir, schema.version),
  });
}

// ---------------------------------------------------------------------------------------------

type Group = "reference" | "traces" | "performance" | "other";

interface Case {
  readonly id: string;
  readonly group: Group;
  readonly path: string;
  /** Filled in by the probe: why the case is not measured (404: the endpoint is not there). */
  skipped?: string;
  /** ms of the probe: the case's first request after the service started (caches cold). */
  first?: number;
  readonly times: number[];
}

async function timeRequest(url: string): Promise<{ status: number; body: string; ms: number }> {
  const start = performance.now();
  const response = await fetch(url, { headers: { "x-api-key": apiKey } });
  const body = await response.text();
  return { status: response.status, body, ms: performance.now() - start };
}

/** One request per case before timing: a 404 skips the case, any other failure throws. */
async function probe(base: string, item: Case): Promise<void> {
  const { status, body, ms: elapsed } = await timeRequest(`${base}${item.path}`);
  item.first = elapsed;
  if (status === 404) {
    item.skipped = "404 (not there yet)";
    return;
  }
  if (status !== 200) {
    throw new Error(`bench: GET ${item.path} answered ${status}: ${body.slice(0, 300)}`);
  }
  if (item.group === "traces") {
    const page = JSON.parse(body) as { traces?: unknown[] };
    if (!Array.isArray(page.traces) || page.traces.length === 0) {
      throw new Error(`bench: GET ${item.path} returned no traces; the store or filter is wrong`);
    }
  }
}

function cases(meta: StoreMeta): Case[] {
  const period = `period_start=${meta.periodStart}&period_end=${meta.periodEnd}`;
  const list: Array<[string, Group, string]> = [
    ["GET /health", "reference", "/health"],
    ["traces: default page", "traces", `/analytics/traces?${period}`],
    ["traces: tag", "traces", `/analytics/traces?${period}&tag=billing`],
    ["traces: model", "traces", `/analytics/traces?${period}&model=claude-3-5-haiku`],
    [
      "traces: tag+model (rare)",
      "traces",
      `/analytics/traces?${period}&tag=mobile&model=llama-3.1-70b`,
    ],
    ["traces: status=error", "traces", `/analytics/traces?${period}&status=error`],
    ["traces: version", "traces", `/analytics/traces?${period}&version=1.5.1`],
    ["traces: sort=latency", "traces", `/analytics/traces?${period}&sort=latency`],
    ["traces: sort=cost", "traces", `/analytics/traces?${period}&sort=cost`],
    ["traces: sort=cost, tag", "traces", `/analytics/traces?${period}&sort=cost&tag=billing`],
    ["performance: by model", "performance", `/analytics/performance?${period}&group_by=model`],
    ["performance: by day", "performance", `/analytics/performance?${period}&group_by=day`],
    ["performance: by version", "performance", `/analytics/performance?${period}&group_by=version`],
    ["performance: by tag", "performance", `/analytics/performance?${period}&group_by=tag`],
    ["metrics: by model", "other", `/analytics/metrics?${period}&group_by=model`],
    ["costs: by day", "other", `/analytics/costs?${period}&group_by=day`],
  ];
  return list.map(([id, group, path]) => ({ id, group, path, times: [] }));
}

export async function runAnalyticsBench(): Promise<void> {
  const started = process.hrtime.bigint();
  const store = analyticsStore();
  const { meta } = store;
  const dbBytes = statSync(join(store.dir, "cairn.db")).size;
  const server = await startServerProcess({ dataDir: store.dir, apiKey: meta.apiKey });
  const all = cases(meta);
  const measureStarted = process.hrtime.bigint();
  try {
    for (const item of all) await probe(server.url, item);
    const active = all.filter((item) => item.skipped === undefined);
    for (let i = 0; i < warmupRequests; i++) {
      for (const item of active) await timeRequest(`${server.url}${item.path}`);
    }
    for (let round = 0; round < timedRounds; round++) {
      for (let i = 0; i < active.length; i++) {
        const item = active[(i + round) % active.length] as Case;
        const { status, ms: elapsed } = await timeRequest(`${server.url}${item.path}`);
        if (status !== 200) throw new Error(`bench: GET ${item.path} answered ${status}`);
        item.times.push(elapsed);
      }
    }
  } finally {
    await server.close();
  }
  const measureSeconds = seconds(measureStarted);

  const health = all.find((item) => item.group === "reference") as Case;
  const healthP95 = percentile(health.times, 95);
  const rows: string[][] = [
    [
      "case",
      "first ms",
      "p50 ms",
      "p95 ms",
      "p99 ms",
      "max ms",
      "p95 vs /health",
      "goal p95",
      "met",
    ],
  ];
  const verdicts = new Map<Group, string[]>([
    ["traces", []],
    ["performance", []],
  ]);
  for (const item of all) {
    if (item.skipped !== undefined) {
      rows.push([item.id, "-", "-", "-", "-", "-", "-", "", `not measured: ${item.skipped}`]);
      verdicts.get(item.group)?.push(`${item.id}: not measured`);
      continue;
    }
    const p95 = percentile(item.times, 95);
    const judged = item.group === "traces" || item.group === "performance";
    const met = p95 <= goalMs;
    rows.push([
      item.id,
      ms(item.first ?? Number.NaN),
      ms(percentile(item.times, 50)),
      ms(p95),
      ms(percentile(item.times, 99)),
      ms(Math.max(...item.times)),
      item.group === "reference" ? "(reference)" : ratio(p95 / healthP95),
      judged ? `<= ${goalMs}` : item.group === "other" ? "(information)" : "",
      judged ? (met ? "yes" : "NO") : "",
    ]);
    if (judged && !met) verdicts.get(item.group)?.push(`${item.id}: ${ms(p95)} ms`);
  }
  const verdict = (group: Group, endpoint: string) => {
    const measured = all.filter((item) => item.group === group && item.skipped === undefined);
    const issues = verdicts.get(group) ?? [];
    if (measured.length === 0) return `${endpoint}: NOT MEASURED (the endpoint answers 404)`;
    const worst = Math.max(...measured.map((item) => percentile(item.times, 95)));
    return `${endpoint}: ${issues.length === 0 ? "MET" : "NOT MET"} (worst p95 ${ms(worst)} ms${issues.length === 0 ? "" : `; ${issues.join(", ")}`})`;
  };

  console.log(
    [
      `analytics: latency on a store of ${thousands(meta.spans)} spans (${thousands(meta.traces)} traces), ${timedRounds} requests per case after ${warmupRequests} warm-up, Node ${process.version}`,
      `  store: ${store.dir} (${mib(dbBytes)}), data ${meta.periodStart}..${meta.periodEnd}; ${store.builtNow ? "built now" : `cached, built ${meta.builtAt}`}: a cold build takes ${meta.buildSeconds.toFixed(0)} s (SpanStore.ingest, ${thousands(buildBatchSpans)} spans per transaction)`,
      "  service: createServer() in a child process on that folder; client: fetch (keep-alive), one request at a time, cases",
      "    interleaved round by round; every query names the store's period (period_start, period_end); limit is the default 50",
      "",
      table(rows),
      "",
      `goal p95 <= ${goalMs} ms on every case:`,
      `  ${verdict("traces", "/analytics/traces")}`,
      `  ${verdict("performance", "/analytics/performance")}`,
      `  reference: GET /health p95 ${ms(healthP95)} ms, same connection and run (the HTTP round trip without a query)`,
      "  'first ms': each case's first request after the service started, in the order listed (caches cold, not in the",
      "  percentiles); p50/p95/p99 (nearest rank) are over the timed requests only",
      "",
      `took ${seconds(started).toFixed(1)} s (measuring ${measureSeconds.toFixed(1)} s${store.builtNow ? `, building ${meta.buildSeconds.toFixed(1)} s` : ""})`,
    ].join("\n"),
  );
  if (!existsSync(store.dir)) throw new Error("bench: the cached store disappeared");
}
