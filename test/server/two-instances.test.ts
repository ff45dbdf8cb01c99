// Several `cairn serve` instances on one PostgreSQL database behind a load balancer (issue 16):
// real processes, a real cluster (Debian's postgresql, started for this file), and a small
// round-robin HTTP proxy standing in for the load balancer. One instance is killed with SIGKILL
// while batches are being sent: every batch an instance acknowledged is stored, each span once.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { resource, span } from "./helpers.js";

const cli = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));
const apiKey = "two-instances-key-0123456789";
const clusterFor = postgresClusterPerFile();
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Instance {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<unknown>;
}

/** `cairn serve` on the database, a free port and a data directory of its own. */
async function startInstance(
  database: string,
  env: Record<string, string | undefined> = { CAIRN_API_KEY: apiKey },
  flags: readonly string[] = [],
): Promise<Instance & { output(): string }> {
  const folder = mkdtempSync(join(tmpdir(), "cairn-serve-"));
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      cli,
      "serve",
      "--port",
      "0",
      "--data-dir",
      folder,
      "--database",
      database,
      "--no-sandboxes",
      ...flags,
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = once(child, "exit");
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  for (;;) {
    const url = /serving at (http:\/\/\S+)/.exec(output)?.[1];
    if (url !== undefined && output.includes("sandboxes")) {
      return { child, url, exited, output: () => output };
    }
    if (child.exitCode !== null) throw new Error(`cairn serve exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A round-robin HTTP proxy: each request goes to the next instance; an instance that refuses
 * or drops a connection gets 502 for that request (a client retries it), as a load balancer
 * without retries of its own answers. It appends the client's address to X-Forwarded-For, as
 * load balancers do.
 */
async function startBalancer(backends: readonly string[]): Promise<{ url: string }> {
  let next = 0;
  const server: Server = createHttpServer((incoming, outgoing) => {
    const target = new URL(incoming.url ?? "/", backends[next++ % backends.length]);
    const forwarded = httpRequest(
      target,
      {
        method: incoming.method,
        headers: {
          ...incoming.headers,
          "x-forwarded-for": [incoming.headers["x-forwarded-for"], incoming.socket.remoteAddress]
            .filter((entry) => entry !== undefined)
            .join(", "),
        },
        agent: false,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
        answer.on("error", () => outgoing.destroy());
      },
    );
    forwarded.on("error", () => {
      if (outgoing.headersSent) outgoing.destroy();
      else outgoing.writeHead(502).end();
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function batchOf(batch: number, size: number) {
  return Array.from({ length: size }, (_, index) =>
    span({
      trace_id: `tr_${batch.toString(16).padStart(32, "0")}`,
      span_id: `${batch.toString(16).padStart(8, "0")}${index.toString(16).padStart(8, "0")}`,
      parent_span_id: index === 0 ? null : `${batch.toString(16).padStart(8, "0")}00000000`,
    }),
  );
}

async function post(url: string, spans: unknown[]): Promise<Response> {
  return fetch(`${url}/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: JSON.stringify({ resource, spans }),
  });
}

describe("cairn serve", () => {
  it("refuses to start on an empty store without CAIRN_API_KEY, and never prints a key", async (context) => {
    const database = await clusterFor(context).createDatabase();
    await expect(startInstance(database, { CAIRN_API_KEY: undefined })).rejects.toThrow(
      /the store has no project yet: set CAIRN_API_KEY/,
    );
    const started = await startInstance(database);
    expect(started.output()).not.toContain(apiKey);
    expect(started.output()).toMatch(/store {5}PostgreSQL at /);
    // Where the other instances reach it (without --advertise-url, where it listens).
    expect(started.output()).toMatch(/instances the others reach this one at http:\/\/\S+:\d+\n/);
    const health = await fetch(`${started.url}/analytics/traces`, {
      headers: { "x-api-key": apiKey },
    });
    expect(health.status).toBe(200);
  });
});

/** GET /analytics/traces through `url` from the loopback address `from`, with `key`. */
function getFrom(url: string, from: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      `${url}/analytics/traces`,
      { localAddress: from, headers: { "x-api-key": key }, agent: false },
      (answer) => {
        answer.resume();
        answer.on("end", () => resolve(answer.statusCode ?? 0));
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

describe("cairn serve behind a load balancer", () => {
  it("with --trusted-proxies, counts one client's failed keys against it, not every client", async (context) => {
    const database = await clusterFor(context).createDatabase();
    // The balancer runs on this host: its address is loopback, and so are the two clients'.
    const flags = ["--trusted-proxies", "loopback"];
    const a = await startInstance(database, { CAIRN_API_KEY: apiKey }, flags);
    const b = await startInstance(database, { CAIRN_API_KEY: apiKey }, flags);
    const balancer = await startBalancer([a.url, b.url]);
    const guesses: number[] = [];
    // The default limit: a burst of 20 failures, then 2 a second, counted in the database.
    for (let attempt = 0; attempt < 24; attempt++) {
      guesses.push(await getFrom(balancer.url, "127.0.0.2", `wrong-key-${attempt}-0123456789`));
    }
    expect(guesses.slice(0, 20).every((status) => status === 401)).toBe(true);
    expect(guesses.at(-1)).toBe(429);
    // Another client behind the same balancer, through either instance.
    expect([
      await getFrom(balancer.url, "127.0.0.3", apiKey),
      await getFrom(balancer.url, "127.0.0.3", apiKey),
    ]).toEqual([200, 200]);
    expect(await getFrom(balancer.url, "127.0.0.2", apiKey)).toBe(429);
  });
});

describe("two cairn serve instances on one PostgreSQL database", () => {
  it("store each span of the same batch once when it reaches both at the same moment", async (context) => {
    const database = await clusterFor(context).createDatabase();
    const [a, b] = await Promise.all([startInstance(database), startInstance(database)]);
    const spans = batchOf(1, 200);
    const answers = await Promise.all([post(a.url, spans), post(b.url, spans)]);
    const counts = (await Promise.all(answers.map((answer) => answer.json()))) as Array<{
      accepted: number;
      duplicates: number;
    }>;
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const sum = (field: "accepted" | "duplicates") =>
      counts.reduce((total, count) => total + count[field], 0);
    expect(sum("accepted")).toBe(200);
    expect(sum("duplicates")).toBe(200);
    // Both read the same trace, with its exact span count, at once.
    for (const instance of [a, b]) {
      const trace = await fetch(`${instance.url}/traces/tr_${"1".padStart(32, "0")}`, {
        headers: { "x-api-key": apiKey },
      });
      expect(((await trace.json()) as { span_count: number }).span_count).toBe(200);
    }
  });

  it("keep every acknowledged span, once, when one instance is killed with SIGKILL mid-ingest", async (context) => {
    const database = await clusterFor(context).createDatabase();
    const a = await startInstance(database);
    const b = await startInstance(database);
    const balancer = await startBalancer([a.url, b.url]);
    const acknowledged = new Set<number>();
    const batches = 120;
    const size = 50;
    let killed = false;
    // Four senders, as an app's exporters would be; each retries a batch until it is taken.
    const senders = Array.from({ length: 4 }, async (_, sender) => {
      for (let batch = sender + 1; batch <= batches; batch += 4) {
        if (!killed && batch > batches / 3) {
          killed = true;
          a.child.kill("SIGKILL");
        }
        for (let attempt = 0; ; attempt++) {
          const answer = await post(balancer.url, batchOf(batch, size)).catch(() => undefined);
          if (answer?.status === 200) {
            await answer.json();
            acknowledged.add(batch);
            break;
          }
          await answer?.body?.cancel();
          if (attempt > 50) throw new Error(`batch ${batch} was never taken`);
        }
      }
    });
    await Promise.all(senders);
    expect(await a.exited).toEqual([null, "SIGKILL"]);
    expect(acknowledged.size).toBe(batches);
    const sql = await openPostgres(database, { maxConnections: 1 });
    cleanups.push(() => sql.end());
    const [stored] = await sql<Array<{ spans: number; distinct: number }>>`
      SELECT count(*)::int AS spans, count(DISTINCT (trace_id, span_id))::int AS distinct
      FROM spans`;
    expect(stored).toEqual({ spans: batches * size, distinct: batches * size });
    const traces = await sql<Array<{ trace_id: string; span_count: number }>>`
      SELECT trace_id, span_count FROM traces ORDER BY trace_id`;
    expect(traces).toHaveLength(batches);
    expect(traces.every((trace) => trace.span_count === size)).toBe(true);
  });
});
