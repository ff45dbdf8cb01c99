// The PostgreSQL engine's transactions: one that PostgreSQL ends for a deadlock or a
// serialization failure runs again, a few times at most; any other failure is the caller's.
import { afterEach, describe, expect, it } from "vitest";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { inTransaction } from "../../src/server/store/postgres/retried-transaction.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile();
const opened: PostgresSql[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.end({ timeout: 1 })));
});

async function database(context: Parameters<typeof clusterFor>[0]): Promise<PostgresSql> {
  const sql = await openPostgres(await clusterFor(context).createDatabase(), { maxConnections: 4 });
  opened.push(sql);
  await sql`CREATE TABLE counters (id int4 PRIMARY KEY, value int4 NOT NULL)`;
  await sql`INSERT INTO counters VALUES (1, 0), (2, 0)`;
  return sql;
}

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; fire(): void } {
  let fire = () => {};
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

describe("inTransaction", () => {
  it("runs a transaction ended by a deadlock again, and both changes are kept", async (context) => {
    const sql = await database(context);
    const firstLocked = signal();
    const secondLocked = signal();
    let runs = 0;
    // Each locks one row, waits for the other to lock the other row, then asks for it.
    const crossing = (own: number, other: number, locked: () => void, othersLock: Promise<void>) =>
      inTransaction(sql, async (transaction) => {
        runs++;
        await transaction`UPDATE counters SET value = value + 1 WHERE id = ${own}`;
        locked();
        await othersLock;
        await transaction`UPDATE counters SET value = value + 10 WHERE id = ${other}`;
      });
    await Promise.all([
      crossing(1, 2, firstLocked.fire, secondLocked.promise),
      crossing(2, 1, secondLocked.fire, firstLocked.promise),
    ]);
    expect(runs).toBe(3);
    expect(await sql`SELECT id, value FROM counters ORDER BY id`).toEqual([
      { id: 1, value: 11 },
      { id: 2, value: 11 },
    ]);
  });

  it("gives up after five serialization failures, and rolls each back", async (context) => {
    const sql = await database(context);
    let runs = 0;
    const failing = inTransaction(sql, async (transaction) => {
      runs++;
      await transaction`UPDATE counters SET value = value + 1 WHERE id = 1`;
      await transaction`DO $$ BEGIN RAISE EXCEPTION 'lost to another' USING ERRCODE = '40001'; END $$`;
    });
    await expect(failing).rejects.toMatchObject({ code: "40001" });
    expect(runs).toBe(5);
    expect(await sql`SELECT value FROM counters WHERE id = 1`).toEqual([{ value: 0 }]);
  });

  it("leaves any other failure to the caller at once", async (context) => {
    const sql = await database(context);
    let runs = 0;
    const failing = inTransaction(sql, async (transaction) => {
      runs++;
      await transaction`UPDATE counters SET value = 5 WHERE id = 2`;
      await transaction`INSERT INTO counters VALUES (1, 0)`;
    });
    await expect(failing).rejects.toMatchObject({ code: "23505" });
    expect(runs).toBe(1);
    expect(await sql`SELECT value FROM counters WHERE id = 2`).toEqual([{ value: 0 }]);
    expect(await inTransaction(sql, async () => "answer")).toBe("answer");
  });
});
