// The PostgreSQL engine's notifications between instances (trace-notifications.ts): two pools on
// one database stand for two instances. What an ingest's transaction announces reaches the other
// instance once, after the commit, and never the one that stored it; a rollback announces
// nothing; a call of many traces is split into payloads PostgreSQL takes; what is not Cairn's
// on the channel is ignored; and a listening connection ended by the server comes back.

import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { inTransaction } from "../../src/server/store/postgres/retried-transaction.js";
import {
  notificationPayloads,
  TraceNotifications,
  tracesChannel,
} from "../../src/server/store/postgres/trace-notifications.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const hex = () => randomBytes(16).toString("hex");

/** What an instance's listener was told, in order, and a way to wait for it. */
class Inbox {
  readonly stored: Array<{ projectId: string; traceHexes: readonly string[] }> = [];
  reconnections = 0;
  readonly #waiters = new Set<() => void>();

  readonly listeners = {
    stored: (projectId: string, traceHexes: readonly string[]) => {
      this.stored.push({ projectId, traceHexes });
      this.#wake();
    },
    reconnected: () => {
      this.reconnections += 1;
      this.#wake();
    },
  };

  /** The traces told of, in order, across notifications. */
  traces(): string[] {
    return this.stored.flatMap((each) => [...each.traceHexes]);
  }

  /** Resolves once `ready()` is true (each listener call looks again). */
  until(ready: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const look = () => {
        if (!ready()) return;
        this.#waiters.delete(look);
        resolve();
      };
      this.#waiters.add(look);
      look();
    });
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

interface Instance {
  readonly sql: PostgresSql;
  readonly notifications: TraceNotifications;
  readonly inbox: Inbox;
}

async function database(context: TestContext): Promise<string> {
  return await clusterFor(context).createDatabase();
}

/** An instance of the service, as far as notifications go: a pool that listens. */
async function instance(url: string): Promise<Instance> {
  const sql = await openPostgres(url, { maxConnections: 2 });
  cleanups.push(() => sql.end({ timeout: 1 }));
  const notifications = new TraceNotifications(sql);
  const inbox = new Inbox();
  await notifications.listen(inbox.listeners);
  cleanups.push(() => notifications.close());
  return { sql, notifications, inbox };
}

/** Announces, in a transaction of its own that commits, the traces stored by `from`. */
async function announce(from: Instance, projectId: string, traceHexes: string[]): Promise<void> {
  await inTransaction(from.sql, (transaction) =>
    from.notifications.announce(transaction, projectId, traceHexes),
  );
}

describe("notifications between instances", () => {
  it("reach the other instance once, after the commit, and never the one that stored", async (context) => {
    const url = await database(context);
    const a = await instance(url);
    const b = await instance(url);
    const first = [hex(), hex()];
    await announce(a, "prj_a", first);
    await b.inbox.until(() => b.inbox.traces().length >= 2);
    expect(b.inbox.stored).toEqual([{ projectId: "prj_a", traceHexes: first }]);
    // B's own next one reaches A after A's first (one queue, in commit order): by then A has
    // seen its own, and skipped it.
    const second = [hex()];
    await announce(b, "prj_b", second);
    await a.inbox.until(() => a.inbox.traces().length >= 1);
    expect(a.inbox.stored).toEqual([{ projectId: "prj_b", traceHexes: second }]);
    // And B skipped its own, which came after A's.
    const third = [hex()];
    await announce(a, "prj_a", third);
    await b.inbox.until(() => b.inbox.traces().length >= 3);
    expect(b.inbox.traces()).toEqual([...first, ...third]);
    expect(a.inbox.reconnections + b.inbox.reconnections).toBe(0);
  });

  it("are not sent by a transaction that rolls back", async (context) => {
    const url = await database(context);
    const a = await instance(url);
    const b = await instance(url);
    const rolledBack = hex();
    await expect(
      a.sql.begin(async (transaction) => {
        await a.notifications.announce(transaction, "prj_a", [rolledBack]);
        throw new Error("the ingest failed after announcing");
      }),
    ).rejects.toThrow("the ingest failed");
    const committed = hex();
    await announce(a, "prj_a", [committed]);
    await b.inbox.until(() => b.inbox.traces().includes(committed));
    expect(b.inbox.traces()).toEqual([committed]);
  });

  it("split a call of many traces into payloads PostgreSQL takes, and lose none", async (context) => {
    const url = await database(context);
    const a = await instance(url);
    const b = await instance(url);
    const many = Array.from({ length: 2000 }, hex);
    const projectId = `prj_${"0".repeat(24)}`;
    const payloads = notificationPayloads(a.notifications.instanceId, projectId, many);
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    // PostgreSQL itself refuses 8000 bytes: the limit the split keeps to is the server's.
    await expect(a.sql`SELECT pg_notify(${tracesChannel}, ${"x".repeat(8000)})`).rejects.toThrow(
      /payload string too long/,
    );
    await announce(a, projectId, many);
    await b.inbox.until(() => b.inbox.traces().length >= many.length);
    expect(b.inbox.traces()).toEqual(many);
    expect(b.inbox.stored).toHaveLength(payloads.length);
    expect(notificationPayloads(a.notifications.instanceId, projectId, [])).toEqual([]);
  });

  it("ignore what is not a notification of Cairn's on the channel, and go on", async (context) => {
    const url = await database(context);
    const a = await instance(url);
    const b = await instance(url);
    const forged = [
      "not json",
      "null",
      JSON.stringify({ instance: "x", project: "prj_a" }),
      JSON.stringify({ instance: "x", project: "prj_a", traces: [] }),
      JSON.stringify({ instance: "x", project: "prj_a", traces: ["tr_not-a-trace"] }),
      JSON.stringify({ instance: "x", project: "prj_a", traces: ["A".repeat(32)] }),
      JSON.stringify({ instance: "x", project: "", traces: [hex()] }),
      JSON.stringify({ instance: "x", project: ["prj_a"], traces: [hex()] }),
      JSON.stringify({ instance: 7, project: "prj_a", traces: [hex()] }),
    ];
    for (const payload of forged) await a.sql`SELECT pg_notify(${tracesChannel}, ${payload})`;
    const real = hex();
    await announce(a, "prj_a", [real]);
    await b.inbox.until(() => b.inbox.traces().includes(real));
    expect(b.inbox.stored).toEqual([{ projectId: "prj_a", traceHexes: [real] }]);
  });

  it("come again after the listening connection is ended by the server, which is told", async (context) => {
    const url = await database(context);
    const a = await instance(url);
    const b = await instance(url);
    const ended = await a.sql<Array<{ ended: boolean }>>`
      SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'listen%'`;
    // A's and B's.
    expect(ended).toEqual([{ ended: true }, { ended: true }]);
    await b.inbox.until(() => b.inbox.reconnections === 1);
    await a.inbox.until(() => a.inbox.reconnections === 1);
    const after = hex();
    await announce(a, "prj_a", [after]);
    await b.inbox.until(() => b.inbox.traces().includes(after));
    expect(b.inbox.reconnections).toBe(1);
  });
});
