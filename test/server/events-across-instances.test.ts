// GET /events with two instances of the service on one PostgreSQL database (issue 16): a
// dashboard whose stream is open on one instance hears of the traces stored through the other,
// as it hears of its own, once each, and only its project's; and when the connection that
// listens for the other instance's changes is lost, the stream is told to read its lists again.

import { connect, createServer as createNetServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { projectEventLimits } from "../../src/server/events/project-events.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { tracesChannel } from "../../src/server/store/postgres/trace-notifications.js";
import { type PostgresCluster, postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { addProject, startTestServer, type TestServer } from "./helpers.js";
import {
  eventStreams,
  isTrace,
  listRow,
  newTraceId,
  postSpans,
  type Received,
  traceSpans,
} from "./project-event-helpers.js";

const clusterFor = postgresClusterPerFile();
const { follow, opened } = eventStreams();
const otherKey = "other-project-key-0123456789";
const cleanups: Array<() => Promise<void> | void> = [];
const saved = { ...projectEventLimits };

beforeAll(() => {
  // Changes sent as soon as they come, not gathered: a change told twice is two events.
  projectEventLimits.flushMs = 0;
});
afterAll(() => {
  Object.assign(projectEventLimits, saved);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A TCP proxy to the cluster's socket, through which an instance reaches the database. While
 * held, a new connection waits (its bytes unread) until `release()`; those already made go on.
 */
async function startProxy(cluster: PostgresCluster) {
  const socketPath = join(cluster.directory, `.s.PGSQL.${cluster.port}`);
  const sockets = new Set<Socket>();
  let held: Array<() => void> | undefined;
  let heldWaiter: (() => void) | undefined;
  const server = createNetServer((client) => {
    sockets.add(client);
    const pipe = () => {
      const upstream = connect(socketPath);
      sockets.add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
      client.pipe(upstream).pipe(client);
    };
    if (held === undefined) {
      pipe();
    } else {
      held.push(pipe);
      heldWaiter?.();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  return {
    urlOf: (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    hold() {
      held = [];
    },
    /** Resolves once a connection is waiting. */
    async connectionHeld(): Promise<void> {
      while (held !== undefined && held.length === 0) {
        await new Promise<void>((resolve) => {
          heldWaiter = resolve;
        });
      }
    },
    release() {
      const waiting = held ?? [];
      held = undefined;
      for (const pipe of waiting) pipe();
    },
  };
}

interface TwoInstances {
  readonly a: TestServer;
  readonly b: TestServer;
  /** A connection of the test's own to the database. */
  readonly sql: PostgresSql;
}

/**
 * Two instances on a new database: A reaches it directly, B through `urlOf` (a proxy) when
 * given; B's `other` project (key otherKey) is made through A.
 */
async function startTwoInstances(
  cluster: PostgresCluster,
  urlOf?: (database: string) => string,
): Promise<TwoInstances> {
  const name = `cairn_events_${Math.random().toString(36).slice(2, 10)}`;
  const direct = await cluster.createDatabase(name);
  const a = await startTestServer({ database: direct });
  cleanups.push(() => a.stop());
  const b = await startTestServer({ database: urlOf?.(name) ?? direct });
  cleanups.push(() => b.stop());
  await addProject(a, "other", otherKey);
  const sql = await openPostgres(direct, { maxConnections: 1 });
  cleanups.push(() => sql.end({ timeout: 1 }));
  return { a, b, sql };
}

describe("GET /events with two instances on one PostgreSQL database", () => {
  it("tells a stream on one instance of a trace stored through the other, as its own row", async (context) => {
    const { a, b } = await startTwoInstances(clusterFor(context));
    const onA = await opened(a);
    const onB = await opened(b);
    const traceId = newTraceId();
    await postSpans(a, traceSpans(traceId, 3, "stored through A"));
    const remote = await onB.until(isTrace(traceId), "the trace stored through A, on B");
    const local = await onA.until(isTrace(traceId), "the trace on A");
    expect(remote.data).toEqual(local.data);
    expect(remote.data).toEqual(await listRow(b, traceId));
    expect(remote.data).toMatchObject({ name: "stored through A", span_count: 3 });
    // The other way too.
    const fromB = newTraceId();
    await postSpans(b, traceSpans(fromB, 1));
    await onA.until(isTrace(fromB), "the trace stored through B, on A");
  });

  it("tells the instance that stored a trace once, not again when its own notification comes back", async (context) => {
    const { a, b } = await startTwoInstances(clusterFor(context));
    const onA = await opened(a);
    const mine = newTraceId();
    await postSpans(a, traceSpans(mine, 1));
    await onA.until(isTrace(mine), "A's own trace");
    // A's notification of `mine` is delivered to A before B's of `theirs` (one queue, in
    // commit order), and changes are sent at once: a second event for `mine` came first.
    const theirs = newTraceId();
    await postSpans(b, traceSpans(theirs, 1));
    await onA.until(isTrace(theirs), "B's trace, on A");
    expect(onA.events.filter(isTrace(mine))).toHaveLength(1);
    expect(onA.events.filter(isTrace(theirs))).toHaveLength(1);
  });

  it("never tells another project's stream, even of a notification forged to name it", async (context) => {
    const { a, b, sql } = await startTwoInstances(clusterFor(context));
    const theirs = await opened(b, { key: otherKey });
    const secret = newTraceId();
    await postSpans(a, traceSpans(secret, 1, "project A's secret"));
    // Anyone who may NOTIFY on the database names the other project with A's trace: the row is
    // read in the project named, where there is no such trace.
    const [other] = await sql<Array<{ id: string }>>`SELECT id FROM projects WHERE name = 'other'`;
    const forged = JSON.stringify({
      instance: "forged",
      project: other?.id,
      traces: [secret.slice(3)],
    });
    await sql`SELECT pg_notify(${tracesChannel}, ${forged})`;
    // The other project's own trace, told after both.
    const own = newTraceId();
    await postSpans(a, traceSpans(own, 1), otherKey);
    await theirs.until(isTrace(own), "the other project's own trace");
    expect(JSON.stringify(theirs.events)).not.toContain(secret.slice(3));
    expect(theirs.of("trace")).toHaveLength(1);
  });

  it("tells a stream to read its lists again when what was stored meanwhile went unheard", async (context) => {
    const cluster = clusterFor(context);
    const proxy = await startProxy(cluster);
    const { a, b, sql } = await startTwoInstances(cluster, proxy.urlOf);
    const onB = await opened(b);
    const before = newTraceId();
    await postSpans(a, traceSpans(before, 1));
    await onB.until(isTrace(before), "a trace before the break");
    // B's listening connection is ended, and may not connect again until released: a trace
    // stored through A meanwhile is told to no one on B.
    proxy.hold();
    // A's and B's listening connections, each waited for until its backend has exited.
    const ended = await sql<Array<{ ended: boolean }>>`
      SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'listen%'`;
    expect(ended.length).toBeGreaterThanOrEqual(2);
    expect(ended.every((row) => row.ended)).toBe(true);
    await proxy.connectionHeld();
    const missed = newTraceId();
    await postSpans(a, traceSpans(missed, 1));
    proxy.release();
    const isLinkLost = (event: Received) =>
      event.event === "resync" && event.data.reason === "link-lost";
    const resync = await onB.until(isLinkLost, "a resync once the link is back");
    expect(resync.data.message).toMatch(/read the lists again/);
    // What the client reads again has the missed trace; and the link works again.
    expect(await listRow(b, missed)).toMatchObject({ trace_id: missed });
    const after = newTraceId();
    await postSpans(a, traceSpans(after, 1));
    await onB.until(isTrace(after), "a trace after the break");
    // One resync for each channel the connection listens on again (sandboxes have their own).
    expect(onB.of("resync").every(isLinkLost)).toBe(true);
    // A client that resumes from before the break gets the resync too.
    const resumed = follow(b, { lastEventId: onB.events.find(isTrace(before))?.id as string });
    await resumed.until(isLinkLost, "the resync, replayed");
  });
});
