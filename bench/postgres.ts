// `npm run bench -- postgres` (issue 16): the service on PostgreSQL next to SQLite, on this
// machine, in the same run.
//
// Ingest: 200,000 spans (20,000 agent runs of 10 spans) posted to POST /traces as batches of
// 1,000 spans by 8 concurrent senders, into a service in its own process: on SQLite (its ingest
// workers, as `cairn dev` runs), on PostgreSQL with one instance, and with two instances on the
// same database (the senders take turns between them, as a load balancer would). Goals: one
// PostgreSQL instance ≥ 50% of SQLite's spans/s; two instances ≥ 1.5× one.
// Analytics: bench/postgres-analytics.ts (p95 of the three reports on 1,000,000 spans, next to
// SQLite's; goal ≤ 150 ms).
//
// PostgreSQL is a throwaway cluster of Debian's postgresql in a temporary directory
// (test/helpers/postgres-cluster.ts), with its default durability (fsync on), removed at the end.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { postgresMissing, startPostgresCluster } from "../test/helpers/postgres-cluster.js";
import { runPostgresAnalyticsBench } from "./postgres-analytics.js";
import { ratio, table, thousands } from "./support/report.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";
import { makeBatches } from "./support/spans.js";

const apiKey = "bench-postgres-key-0123456789";
const totalTraces = 20_000;
const batchSpans = 1_000;
const senders = 8;

export async function runPostgresBench(): Promise<void> {
  console.log("postgres: the service on PostgreSQL next to SQLite (issue 16)");
  const missing = postgresMissing();
  if (missing !== undefined) throw new Error(`bench postgres: ${missing}`);
  const cluster = await startPostgresCluster({ durable: true });
  try {
    const bodies = (salt: number) =>
      makeBatches({
        salt,
        firstIndex: 0,
        traces: totalTraces,
        batchSpans,
        startMs: (index) => Date.UTC(2026, 10, 20) + index * 60_000,
        seed: salt,
      }).map((batch) => JSON.stringify(batch));
    const postgresCpu = () => clusterCpuMs(cluster.directory);
    const sqlite = await ingestRate(1, undefined, bodies(1), () => 0);
    const one = await ingestRate(
      1,
      await cluster.createDatabase("bench_one"),
      bodies(2),
      postgresCpu,
    );
    const two = await ingestRate(
      2,
      await cluster.createDatabase("bench_two"),
      bodies(3),
      postgresCpu,
    );
    const [s, r1, r2] = [sqlite.rate, one.rate, two.rate];
    console.log(
      table([
        ["store", "instances", "spans/s", "vs SQLite", "vs one instance", "goal", ...cpuHeader],
        ["SQLite (reference)", "1", thousands(s), "1.00×", "", "", ...cpuCells(sqlite)],
        [
          "PostgreSQL",
          "1",
          thousands(r1),
          ratio(r1 / s),
          "1.00×",
          `≥ 0.50× SQLite: ${r1 / s >= 0.5 ? "met" : "missed"}`,
          ...cpuCells(one),
        ],
        [
          "PostgreSQL",
          "2",
          thousands(r2),
          ratio(r2 / s),
          ratio(r2 / r1),
          `≥ 1.5× one: ${r2 / r1 >= 1.5 ? "met" : "missed"}`,
          ...cpuCells(two),
        ],
      ]),
    );
    console.log(
      "CPU: seconds of CPU per 100,000 spans, of the service processes and of PostgreSQL's; busy: their share of the machine's cores during the run; ceiling: the spans/s that CPU per span allows with every core busy; load: the 1-minute load average at its start and end (other work on the machine slows every row)",
    );
    // Where one instance already keeps the cores busy, a second has nothing to run on.
    console.log(
      `On this machine (${loadCores()} cores, PostgreSQL on the same cores): one instance reaches ${Math.round((r1 / ceiling(one)) * 100)}% of its ceiling, so two can reach at most ${ratio(ceiling(two) / r1)} of one; the PostgreSQL ceiling is ${ratio(ceiling(one) / s)} of SQLite's measured rate.`,
    );
  } finally {
    await cluster.stop();
  }
  // BENCH_POSTGRES=ingest leaves the analytics part (a 1,000,000-span store) out.
  if (process.env.BENCH_POSTGRES === "ingest") return;
  console.log("");
  await runPostgresAnalyticsBench();
}

/** What one row measured: spans/s, and the CPU it took (ms) of the services and PostgreSQL. */
interface IngestRun {
  readonly rate: number;
  readonly spans: number;
  readonly seconds: number;
  readonly serviceCpuMs: number;
  readonly postgresCpuMs: number;
  readonly load: readonly [number, number];
}

const cpuHeader = ["service CPU", "PostgreSQL CPU", "busy", "ceiling", "load"];

function cpuCells(run: IngestRun): string[] {
  const per = (ms: number) => `${((ms / run.spans) * 100).toFixed(1)} s`;
  const cores = loadCores();
  const cpuSeconds = (run.serviceCpuMs + run.postgresCpuMs) / 1000;
  const busy = cpuSeconds / run.seconds / cores;
  return [
    per(run.serviceCpuMs),
    run.postgresCpuMs === 0 ? "" : per(run.postgresCpuMs),
    `${Math.round(busy * 100)}% of ${cores}`,
    thousands(ceiling(run)),
    `${run.load[0].toFixed(1)}–${run.load[1].toFixed(1)}`,
  ];
}

/** Spans/s with every core of the machine busy at the CPU per span the run measured. */
function ceiling(run: IngestRun): number {
  return (loadCores() * run.spans) / ((run.serviceCpuMs + run.postgresCpuMs) / 1000);
}

function loadCores(): number {
  return Math.max(1, readFileSync("/proc/cpuinfo", "utf8").match(/^processor\s/gm)?.length ?? 1);
}

/**
 * CPU time (ms) used so far by the processes of the cluster in `directory`: its postmaster and
 * every backend and worker it started (Linux's /proc; 0 elsewhere).
 */
function clusterCpuMs(directory: string): number {
  let postmaster: number;
  try {
    postmaster = Number(
      readFileSync(join(directory, "data", "postmaster.pid"), "utf8").split("\n")[0],
    );
  } catch {
    return 0;
  }
  const ticksMs = 10; // USER_HZ is 100 on Linux
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fields: string[];
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    } catch {
      continue;
    }
    // Fields from the state on: ppid is the 2nd, utime the 12th, stime the 13th.
    if (Number(entry) !== postmaster && Number(fields[1]) !== postmaster) continue;
    total += (Number(fields[11]) + Number(fields[12])) * ticksMs;
  }
  return total;
}

/** Spans per second stored through POST /traces by `instances` service processes. */
async function ingestRate(
  instances: number,
  database: string | undefined,
  bodies: readonly string[],
  postgresCpuMs: () => number,
): Promise<IngestRun> {
  const folders = Array.from({ length: instances }, () =>
    mkdtempSync(join(tmpdir(), "cairn-bench-pg-")),
  );
  const servers: ServerProcess[] = [];
  try {
    // One after the other: the first makes the project and migrates.
    for (const dataDir of folders) {
      servers.push(
        await startServerProcess({
          dataDir,
          apiKey,
          logLevel: "warn",
          ...(database === undefined ? {} : { database }),
        }),
      );
    }
    // A warm-up batch per instance (connections, prepared statements, the day's partition).
    const warm = makeBatches({
      salt: 99,
      firstIndex: 0,
      traces: 100 * servers.length,
      batchSpans,
      startMs: () => Date.UTC(2026, 10, 20),
      seed: 99,
    });
    await Promise.all(
      servers.map((server, index) => post(server.url, JSON.stringify(warm[index]))),
    );
    let next = 0;
    const serviceCpu = async () =>
      (await Promise.all(servers.map((server) => server.cpuMs()))).reduce((a, b) => a + b, 0);
    const cpuBefore = { service: await serviceCpu(), postgres: postgresCpuMs() };
    const loadBefore = loadavg()[0] as number;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: senders }, async () => {
        for (let index = next++; index < bodies.length; index = next++) {
          const server = servers[index % servers.length] as ServerProcess;
          await post(server.url, bodies[index] as string);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const spans = bodies.length * batchSpans;
    return {
      rate: spans / seconds,
      spans,
      seconds,
      serviceCpuMs: (await serviceCpu()) - cpuBefore.service,
      postgresCpuMs: postgresCpuMs() - cpuBefore.postgres,
      load: [loadBefore, loadavg()[0] as number],
    };
  } finally {
    for (const server of servers) await server.close();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

async function post(url: string, body: string): Promise<void> {
  const answer = await fetch(`${url}/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body,
  });
  const result = (await answer.json()) as { accepted?: number };
  if (answer.status !== 200 || result.accepted !== batchSpans) {
    throw new Error(
      `bench postgres: POST /traces answered ${answer.status} ${JSON.stringify(result)}`,
    );
  }
}
