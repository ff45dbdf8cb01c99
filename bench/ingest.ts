// Ingest throughput: spans per second through `POST /traces` (batches of 1,000 spans, HTTP on
// loopback, keep-alive), next to the raw node:sqlite insert rate of the same rows into the same
// schema, measured in the same run. Goal (issue 3): >= 50,000 spans/s and >= 25% of the raw rate.
//
// The service runs in a child process (bench/support/serve.ts, createServer()), so the client's
// work (requests, timing) does not share its event loop, as with a real exporter in another process.
// The service parses and stores bodies on its ingest workers (one per core, up to 4), so the
// client must be cheap: node:http, bodies JSON-encoded before timing. The figure is the
// service's rate, not the client's.
//
// Each round measures every case on a fresh database, cases in a rotating order: the raw insert,
// and, for information, SpanStore.ingest in-process (the store's own cost, without HTTP, JSON or
// validation) and the Hono app in-process (app.fetch, no sockets), then POST /traces with 1 and
// with 4 requests in flight. BENCH_VERBOSE=1 prints the rate of every round. Figures are medians over
// the rounds; ratios are medians of the per-round ratios. A broken measurement (a request that
// fails, spans missing from the store afterwards) throws; a missed goal is only printed.

import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import type { ExportBatch, ExportedSpan } from "../src/core/wire/index.js";
import { createApp } from "../src/server/app.js";
import { inProcessIngester } from "../src/server/ingest/batch-ingester.js";
import { parseExportBatch } from "../src/server/ingest/parse-export-batch.js";
import { openDatabase, transaction } from "../src/server/store/database.js";
import { ProjectStore } from "../src/server/store/projects.js";
import { insertSpanSql, SpanStore, spanRowValues } from "../src/server/store/span-store.js";
import { sqliteStore } from "../src/server/store/sqlite-store.js";
import { median, percent, ratio, seconds, table, thousands } from "./support/report.js";
import { startServerProcess } from "./support/server-process.js";
import { makeBatches, spansPerTrace } from "./support/spans.js";

const goalSpansPerSecond = 50_000;
const goalShareOfRaw = 0.25;

const batchSpans = 1_000;
/** Timed batches per case and round: 100,000 spans. */
const timedBatches = 100;
/** Batches sent before timing, into the same database (JIT, connections, statement caches). */
const warmupBatches = 10;
const rounds = 5;
/** Batches whose JSON.parse and validation are timed for the breakdown, per round. */
const breakdownBatches = 30;
const concurrencies = [1, 4] as const;
const apiKey = "bench-ingest-0123456789abcdef";
const benchProjectId = "prj_bench";

/** The values SpanStore binds for a span, computed before timing. */
function toRow(
  span: ExportedSpan,
  resource: ExportBatch["resource"],
  receivedAt: string,
): SQLInputValue[] {
  return spanRowValues(benchProjectId, span, resource, receivedAt);
}

interface Workload {
  readonly warmup: ExportBatch[];
  readonly timed: ExportBatch[];
  readonly warmupBodies: Uint8Array[];
  readonly timedBodies: Uint8Array[];
  readonly warmupRows: SQLInputValue[][][];
  readonly timedRows: SQLInputValue[][][];
}

function makeWorkload(): Workload {
  const now = Date.now();
  const batches = (salt: number, count: number) =>
    makeBatches({
      salt,
      firstIndex: 0,
      traces: (count * batchSpans) / spansPerTrace,
      batchSpans,
      // Over the last day, a trace every ~0.5 s.
      startMs: (index) => now - 86_400_000 + index * 500,
      seed: salt,
    });
  const warmup = batches(0xbe0c, warmupBatches);
  const timed = batches(0xbe0d, timedBatches);
  const encoder = new TextEncoder();
  const receivedAt = new Date(now).toISOString();
  const rows = (list: ExportBatch[]) =>
    list.map((batch) => batch.spans.map((span) => toRow(span, batch.resource, receivedAt)));
  return {
    warmup,
    timed,
    warmupBodies: warmup.map((batch) => encoder.encode(JSON.stringify(batch))),
    timedBodies: timed.map((batch) => encoder.encode(JSON.stringify(batch))),
    warmupRows: rows(warmup),
    timedRows: rows(timed),
  };
}

/** A fresh data folder for one case, removed afterwards whatever happens. */
async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-bench-ingest-"));
  try {
    return await work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function countSpans(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM spans").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function expectSpans(path: string, expected: number, what: string): void {
  const stored = countSpans(path);
  if (stored !== expected) {
    throw new Error(`bench: ${what} stored ${stored} spans, expected ${expected}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The cases. Each returns the wall time its timed batches took, and the CPU time the process
// doing the work (this one, or the service's) spent on them: CPU time is much less disturbed
// by other load on the machine, so it is the steadier figure to compare runs and changes with.

interface Timing {
  readonly seconds: number;
  readonly cpuMs: number;
}

/** Starts timing work done in this process; the returned function stops it. */
function inProcessTimer(): () => Timing {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { seconds: seconds(start), cpuMs: (used.user + used.system) / 1000 };
  };
}

/** The reference: the same rows, the same INSERT, one transaction per 1,000 rows. */
function rawInsert(workload: Workload): Promise<Timing> {
  return withTempDir(async (dir) => {
    const path = join(dir, "cairn.db");
    const db = openDatabase(path);
    let elapsed: Timing;
    try {
      const insert = db.prepare(insertSpanSql);
      const run = (batches: SQLInputValue[][][]) => {
        for (const rows of batches) {
          transaction(db, () => {
            for (const row of rows) insert.run(...row);
          });
        }
      };
      run(workload.warmupRows);
      const stop = inProcessTimer();
      run(workload.timedRows);
      elapsed = stop();
    } finally {
      db.close();
    }
    expectSpans(path, (warmupBatches + timedBatches) * batchSpans, "the raw insert");
    return elapsed;
  });
}

/** SpanStore.ingest in this process on parsed batches: the store without HTTP or validation. */
function storeIngest(workload: Workload): Promise<Timing> {
  return withTempDir(async (dir) => {
    const path = join(dir, "cairn.db");
    const db = openDatabase(path);
    let elapsed: Timing;
    try {
      const store = new SpanStore(db);
      for (const batch of workload.warmup) store.ingest(benchProjectId, batch);
      const stop = inProcessTimer();
      for (const batch of workload.timed) store.ingest(benchProjectId, batch);
      elapsed = stop();
    } finally {
      db.close();
    }
    expectSpans(path, (warmupBatches + timedBatches) * batchSpans, "SpanStore.ingest");
    return elapsed;
  });
}

/**
 * The service's Hono app in this process, called with `app.fetch(new Request(…))`: routing, auth,
 * rate limit, body read, JSON.parse, validation and the store, without sockets or Node's HTTP
 * server. The gap to POST /traces is the HTTP transport (and the client).
 */
function appFetch(workload: Workload): Promise<Timing> {
  return withTempDir(async (dir) => {
    const path = join(dir, "cairn.db");
    const db = openDatabase(path);
    let elapsed: Timing;
    try {
      const projects = new ProjectStore(db);
      projects.createProject("default", apiKey);
      const store = sqliteStore(db, new SpanStore(db));
      const app = createApp({
        store,
        db,
        ingester: inProcessIngester(store.spans),
        bodyLimitBytes: 10 * 1024 * 1024,
        rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
        isClosing: () => false,
      });
      const post = async (bodies: readonly Uint8Array[]) => {
        for (const body of bodies) {
          const response = await app.fetch(
            new Request("http://127.0.0.1/traces", {
              method: "POST",
              headers: { "content-type": "application/json", "x-api-key": apiKey },
              body: body as Uint8Array<ArrayBuffer>,
            }),
          );
          const text = await response.text();
          if (response.status !== 200) {
            throw new Error(`bench: app.fetch answered ${response.status}: ${text.slice(0, 300)}`);
          }
        }
      };
      await post(workload.warmupBodies);
      const stop = inProcessTimer();
      await post(workload.timedBodies);
      elapsed = stop();
    } finally {
      db.close();
    }
    expectSpans(path, (warmupBatches + timedBatches) * batchSpans, "app.fetch");
    return elapsed;
  });
}

/**
 * POSTs one body with node:http on a keep-alive agent. Not fetch: undici's fetch spends about
 * 25 ms of CPU sending a 1 MB body (node:http: 1.5 ms), and on a 2-core machine that is the
 * service's second core.
 */
function post(agent: Agent, url: URL, body: Uint8Array): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": body.byteLength,
          "x-api-key": apiKey,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** Sends every body, `concurrency` requests in flight; checks that each batch was stored. */
async function send(url: string, bodies: readonly Uint8Array[], concurrency: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL("/traces", url);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < bodies.length; index = next++) {
      const { status, text } = await post(agent, target, bodies[index] as Uint8Array);
      if (status !== 200) {
        throw new Error(`bench: POST /traces answered ${status}: ${text.slice(0, 300)}`);
      }
      const result = JSON.parse(text) as { accepted: number };
      if (result.accepted !== batchSpans) {
        throw new Error(`bench: POST /traces accepted ${result.accepted} of ${batchSpans} spans`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
}

function httpIngest(workload: Workload, concurrency: number): Promise<Timing> {
  return withTempDir(async (dir) => {
    const server = await startServerProcess({ dataDir: dir, apiKey });
    let elapsed: Timing;
    try {
      await send(server.url, workload.warmupBodies, concurrency);
      const cpuBefore = await server.cpuMs();
      const start = process.hrtime.bigint();
      await send(server.url, workload.timedBodies, concurrency);
      const wall = seconds(start);
      elapsed = { seconds: wall, cpuMs: (await server.cpuMs()) - cpuBefore };
    } finally {
      await server.close();
    }
    expectSpans(
      join(dir, "cairn.db"),
      (warmupBatches + timedBatches) * batchSpans,
      `POST /traces (${concurrency} in flight)`,
    );
    return elapsed;
  });
}

/** CPU ms per batch of JSON.parse and of validation (parseExportBatch), on the first batches. */
function parseCosts(workload: Workload): { json: number; validate: number } {
  const decoder = new TextDecoder();
  const bodies = workload.timedBodies.slice(0, breakdownBatches);
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };
  // Untimed first: the validator is compiled (JIT) on first use.
  for (const body of bodies.slice(0, 5)) parseExportBatch(JSON.parse(decoder.decode(body)));
  let json = 0;
  let validate = 0;
  for (const body of bodies) {
    const text = decoder.decode(body);
    const t0 = process.cpuUsage();
    const parsed: unknown = JSON.parse(text);
    json += cpuMs(t0);
    const t1 = process.cpuUsage();
    parseExportBatch(parsed);
    validate += cpuMs(t1);
  }
  return { json: json / bodies.length, validate: validate / bodies.length };
}

// ---------------------------------------------------------------------------------------------

type CaseId = "raw" | "store" | "app" | `http${(typeof concurrencies)[number]}`;

export async function runIngestBench(): Promise<void> {
  const started = process.hrtime.bigint();
  const workload = makeWorkload();
  const bodyBytes = workload.timedBodies.reduce((sum, body) => sum + body.byteLength, 0);
  const timedSpans = timedBatches * batchSpans;

  const cases: { id: CaseId; run: () => Promise<Timing> }[] = [
    { id: "raw", run: () => rawInsert(workload) },
    { id: "store", run: () => storeIngest(workload) },
    { id: "app", run: () => appFetch(workload) },
    ...concurrencies.map((concurrency) => ({
      id: `http${concurrency}` as CaseId,
      run: () => httpIngest(workload, concurrency),
    })),
  ];
  const rates = new Map<CaseId, number[]>(cases.map((item) => [item.id, []]));
  /** CPU ms per batch of the process doing the work, per round. */
  const cpu = new Map<CaseId, number[]>(cases.map((item) => [item.id, []]));
  const parse = { json: [] as number[], validate: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const item = cases[(i + round) % cases.length] as (typeof cases)[number];
      const timing = await item.run();
      rates.get(item.id)?.push(timedSpans / timing.seconds);
      cpu.get(item.id)?.push(timing.cpuMs / timedBatches);
    }
    const costs = parseCosts(workload);
    parse.json.push(costs.json);
    parse.validate.push(costs.validate);
  }

  const rawRates = rates.get("raw") ?? [];
  const rawCpu = cpu.get("raw") ?? [];
  const rate = (id: CaseId) => median(rates.get(id) ?? []);
  /** Median of the per-round ratios to the raw rate of the same round. */
  const share = (id: CaseId) =>
    median((rates.get(id) ?? []).map((value, round) => value / (rawRates[round] ?? Number.NaN)));
  const cpuMs = (id: CaseId) => median(cpu.get(id) ?? []);
  /** The same on CPU time: raw CPU per batch over this case's, per round. */
  const cpuShare = (id: CaseId) =>
    median((cpu.get(id) ?? []).map((value, round) => (rawCpu[round] ?? Number.NaN) / value));
  const spread = (id: CaseId) => {
    const values = rates.get(id) ?? [];
    return `${thousands(Math.min(...values))}-${thousands(Math.max(...values))}`;
  };
  const figures = (id: CaseId): string[] => [
    thousands(rate(id)),
    spread(id),
    id === "raw" ? ratio(1) : percent(share(id)),
    cpuMs(id).toFixed(1),
    thousands((batchSpans / cpuMs(id)) * 1000),
    id === "raw" ? ratio(1) : percent(cpuShare(id)),
  ];

  const rows: string[][] = [
    [
      "case",
      "spans/s",
      "rounds",
      "vs raw",
      "CPU ms/batch",
      "spans/CPU-s",
      "vs raw",
      "goal (on spans/s)",
      "met",
    ],
    ["raw node:sqlite INSERT (reference)", ...figures("raw"), "", ""],
    ["SpanStore.ingest, in-process", ...figures("store"), "(information)", ""],
    ["app.fetch(Request), in-process", ...figures("app"), "(information)", ""],
  ];
  const verdicts: string[] = [];
  for (const concurrency of concurrencies) {
    const id: CaseId = `http${concurrency}`;
    const met = rate(id) >= goalSpansPerSecond && share(id) >= goalShareOfRaw;
    rows.push([
      `POST /traces, ${concurrency} in flight`,
      ...figures(id),
      `>= ${thousands(goalSpansPerSecond)} and >= ${percent(goalShareOfRaw)}`,
      met ? "yes" : "NO",
    ]);
    verdicts.push(
      `${concurrency} in flight ${met ? "met" : "MISSED"} (${thousands(rate(id))}/s, ${percent(share(id))} of raw)`,
    );
  }

  // Where the service's CPU time for one batch goes: differences between the cases' CPU medians,
  // and JSON.parse and validation timed on their own. Approximate: the gaps are differences of
  // larger figures measured in different processes.
  const json = median(parse.json);
  const validate = median(parse.validate);
  const raw = cpuMs("raw");
  const store = cpuMs("store");
  const app = cpuMs("app");
  const http = cpuMs("http1");
  const line = (label: string, value: number) => [label, value.toFixed(1), percent(value / http)];
  const breakdown = [
    ["step (one batch of 1,000 spans)", "CPU ms", "of POST /traces (service, 1 in flight)"],
    line("span INSERTs (the raw reference)", raw),
    line("trace summaries, tags, models (SpanStore - raw)", store - raw),
    line("JSON.parse of the body (timed alone)", json),
    line("validation, parseExportBatch/zod (timed alone)", validate),
    line("Hono: routing, auth, body read (app - SpanStore - parse)", app - store - json - validate),
    line("Node HTTP server and adapter (service - app)", http - app),
    line("total: the service's CPU per batch", http),
  ];

  const allMet = verdicts.every((verdict) => verdict.includes(" met "));
  console.log(
    [
      `ingest: POST /traces throughput (median of ${rounds} rounds, Node ${process.version}, ${process.platform}/${process.arch})`,
      `  workload: ${thousands(timedSpans)} spans timed per case and round, in ${timedBatches} batches of ${thousands(batchSpans)} (traces of 10 spans: agent root, retrieval, 3 llm with model/usage/cost, 4 tools, chain; ~200-char input/output);`,
      `    ${(bodyBytes / timedSpans).toFixed(0)} bytes of JSON per span, ${(bodyBytes / timedBatches / 1e6).toFixed(2)} MB per batch; ${warmupBatches} warm-up batches before timing; a fresh database per case and round`,
      "  service: createServer() in a child process (127.0.0.1, WAL, synchronous=NORMAL, default ingest workers; rate limit raised out of the way);",
      "    client: node:http (keep-alive) in this process, bodies encoded before timing",
      "  reference: the same rows bound to the same INSERT as SpanStore, one transaction per 1,000 rows, openDatabase() on a fresh file",
      "",
      table(rows),
      "",
      `goal >= ${thousands(goalSpansPerSecond)} spans/s and >= ${percent(goalShareOfRaw)} of raw: ${allMet ? "MET" : "NOT MET"} (${verdicts.join("; ")})`,
      `  on CPU time: POST /traces ${thousands((batchSpans / cpuMs("http1")) * 1000)} spans/CPU-s with 1 in flight, ${percent(cpuShare("http1"))} of raw.`,
      `    One sender waits for each answer, so its rate is one batch's latency: ${thousands(goalSpansPerSecond)}/s needs ${((batchSpans / goalSpansPerSecond) * 1000).toFixed(0)} ms per batch`,
      `    of ${thousands(batchSpans)} (now ${cpuMs("http1").toFixed(1)} CPU ms); with several in flight the ingest workers parse batches on every core at once.`,
      "  spans/s: wall clock, median over the rounds ('rounds': lowest-highest); 'vs raw': median of the per-round ratios to the raw",
      "  case of the same round. CPU ms/batch: CPU time of the process doing the work (the service's child process for",
      "  POST /traces, without the client), steadier than wall time when the machine is shared; spans/CPU-s is its inverse.",
      "",
      `where the service's CPU time for one batch goes (medians; JSON.parse and validation timed in this process on ${breakdownBatches} batches; information):`,
      table(breakdown),
      "",
      `took ${seconds(started).toFixed(1)} s`,
    ].join("\n"),
  );
  if (process.env.BENCH_VERBOSE) {
    for (const [id, values] of rates) {
      const cpuValues = (cpu.get(id) ?? []).map((value) => value.toFixed(1));
      console.log(
        `${id}: ${values.map((value) => thousands(value)).join(" ")} spans/s; CPU ms/batch ${cpuValues.join(" ")}`,
      );
    }
  }
}
