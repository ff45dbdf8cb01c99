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

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
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
    const sqlite = await ingestRate(1, undefined, bodies(1));
    const one = await ingestRate(1, await cluster.createDatabase("bench_one"), bodies(2));
    const two = await ingestRate(2, await cluster.createDatabase("bench_two"), bodies(3));
    console.log(
      table([
        ["store", "instances", "spans/s", "vs SQLite", "vs one instance", "goal"],
        ["SQLite (reference)", "1", thousands(sqlite), "1.00×", "", ""],
        [
          "PostgreSQL",
          "1",
          thousands(one),
          ratio(one / sqlite),
          "1.00×",
          `≥ 0.50× SQLite: ${one / sqlite >= 0.5 ? "met" : "missed"}`,
        ],
        [
          "PostgreSQL",
          "2",
          thousands(two),
          ratio(two / sqlite),
          ratio(two / one),
          `≥ 1.5× one: ${two / one >= 1.5 ? "met" : "missed"}`,
        ],
      ]),
    );
  } finally {
    await cluster.stop();
  }
  // BENCH_POSTGRES=ingest leaves the analytics part (a 1,000,000-span store) out.
  if (process.env.BENCH_POSTGRES === "ingest") return;
  console.log("");
  await runPostgresAnalyticsBench();
}

/** Spans per second stored through POST /traces by `instances` service processes. */
async function ingestRate(
  instances: number,
  database: string | undefined,
  bodies: readonly string[],
): Promise<number> {
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
    return (bodies.length * batchSpans) / seconds;
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
