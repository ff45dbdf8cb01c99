// The rate limits' buckets in PostgreSQL (store/postgres/rate-limits.ts) against the in-memory
// ones (http/rate-limit.ts TokenBuckets) on a real server (a throwaway cluster for this file):
// the same takes at the same times give the same waits; two pools, as two instances, never
// both get a bucket's last token; keys are kept hashed; full buckets are deleted.
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import {
  type LimitBuckets,
  memoryRateLimits,
  type RateLimitOptions,
} from "../../src/server/http/rate-limit.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import {
  deleteFullBuckets,
  postgresRateLimits,
} from "../../src/server/store/postgres/rate-limits.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const clusterFor = postgresClusterPerFile();
const opened: PostgresSql[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((sql) => sql.end({ timeout: 1 })));
});

/** A migrated database of its own, and `pools` pools on it (each an instance's). */
async function database(context: TestContext, pools = 1): Promise<PostgresSql[]> {
  const url = await clusterFor(context).createDatabase(undefined, { migrated: true });
  const made: PostgresSql[] = [];
  for (let index = 0; index < pools; index++) {
    const sql = await openPostgres(url, { maxConnections: 10 });
    opened.push(sql);
    made.push(sql);
  }
  return made;
}

type Operation = "takeIfAny" | "take" | "wait";

/**
 * A repeatable run of operations on a few keys, a fifth of them some eighths of a token's
 * refill time (`tokenMs`) after the one before, the rest at once.
 */
function script(seed: number, length: number, tokenMs: number) {
  let state = seed;
  const next = (below: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return Math.floor((state / 2_147_483_648) * below);
  };
  const operations: Operation[] = ["takeIfAny", "takeIfAny", "takeIfAny", "take", "wait"];
  return Array.from({ length }, () => ({
    // Eighths, so that both sides compute the same binary fractions to the bit.
    afterMs: next(5) === 0 ? (tokenMs / 8) * next(12) : 0,
    operation: operations[next(operations.length)] as Operation,
    key: `key-${next(3)}`,
  }));
}

async function run(buckets: LimitBuckets, operation: Operation, key: string) {
  if (operation === "take") {
    await buckets.take(key);
    return "taken";
  }
  return buckets[operation](key);
}

describe("rate limit buckets in PostgreSQL", () => {
  const limits: RateLimitOptions[] = [
    { requestsPerSecond: 2, burst: 3 },
    { requestsPerSecond: 0.5, burst: 1 },
    { requestsPerSecond: 4, burst: 10 },
    { requestsPerSecond: 0.25, burst: 2 },
  ];

  it("give the waits of the in-memory buckets for the same takes at the same times", async (context) => {
    const [sql] = await database(context);
    // Milliseconds in memory, seconds since the epoch in the database, from a real date.
    let nowMs = Date.UTC(2026, 0, 15, 12);
    for (const [index, limit] of limits.entries()) {
      const memory = memoryRateLimits(() => nowMs).buckets("test", limit);
      const stored = postgresRateLimits(sql as PostgresSql, { now: () => nowMs / 1000 }).buckets(
        `test-${index}`,
        limit,
      );
      const steps = script(index + 1, 400, 1000 / limit.requestsPerSecond);
      const expected: unknown[] = [];
      const actual: unknown[] = [];
      for (const step of steps) {
        nowMs += step.afterMs;
        expected.push(await run(memory, step.operation, step.key));
        actual.push(await run(stored, step.operation, step.key));
      }
      expect(actual).toEqual(expected);
      // The run went through full, empty and indebted buckets, not only the easy case.
      expect(
        expected.filter((wait) => typeof wait === "number" && wait > 1).length,
      ).toBeGreaterThan(10);
      expect(expected.filter((wait) => wait === 0).length).toBeGreaterThan(10);
    }
  });

  it("count a debt: takes past the burst are waited off at the limit's rate", async (context) => {
    const [sql] = await database(context);
    let now = 1_800_000_000;
    const buckets = postgresRateLimits(sql as PostgresSql, { now: () => now }).buckets("debt", {
      requestsPerSecond: 0.5,
      burst: 3,
    });
    for (let attempt = 0; attempt < 6; attempt++) await buckets.take("address");
    // 3 - 6 = -3 tokens: 4 tokens to refill before the next, at 0.5 a second.
    expect(await buckets.wait("address")).toBe(8);
    expect(await buckets.takeIfAny("address")).toBe(8);
    now += 7.5;
    expect(await buckets.takeIfAny("address")).toBe(1);
    now += 0.5;
    expect(await buckets.takeIfAny("address")).toBe(0);
  });

  it("never give the last token to two instances at once", async (context) => {
    const [first, second] = await database(context, 2);
    const limit = { requestsPerSecond: 0.001, burst: 5 };
    const a = postgresRateLimits(first as PostgresSql).buckets("api-key", limit);
    const b = postgresRateLimits(second as PostgresSql).buckets("api-key", limit);
    for (let round = 0; round < 5; round++) {
      const waits = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          (index % 2 === 0 ? a : b).takeIfAny(`key-of-round-${round}`),
        ),
      );
      expect(waits.filter((wait) => wait === 0)).toHaveLength(5);
      for (const wait of waits.filter((each) => each !== 0)) {
        expect(wait).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it("keep keys hashed under their limit's name, and time them by the database's clock", async (context) => {
    const [sql] = await database(context);
    const limits = postgresRateLimits(sql as PostgresSql);
    const apiKey = "cairn-secret-api-key-0123456789";
    await limits.buckets("api-key", { requestsPerSecond: 1, burst: 5 }).takeIfAny(apiKey);
    await limits.buckets("failed-auth", { requestsPerSecond: 1, burst: 5 }).take("203.0.113.7");
    const rows = await (sql as PostgresSql)<Array<{ key: string; skew: number }>>`
      SELECT key, abs(updated_at - extract(epoch FROM clock_timestamp())::float8) AS skew
      FROM rate_limit_buckets ORDER BY key`;
    expect(rows.map((row) => row.key)).toEqual([
      expect.stringMatching(/^api-key:[A-Za-z0-9_-]{43}$/),
      expect.stringMatching(/^failed-auth:[A-Za-z0-9_-]{43}$/),
    ]);
    const text = JSON.stringify(rows);
    expect(text).not.toContain("cairn-secret");
    expect(text).not.toContain("203.0.113");
    for (const row of rows) expect(row.skew).toBeLessThan(60);
  });

  it("delete the buckets that are full again, and only those", async (context) => {
    const [sql] = await database(context);
    let now = 1_800_000_000;
    const buckets = postgresRateLimits(sql as PostgresSql, { now: () => now }).buckets("flood", {
      requestsPerSecond: 2,
      burst: 4,
    });
    // A flood of distinct addresses, one failure each, and one address that failed often.
    for (let address = 0; address < 500; address++) await buckets.take(`198.51.100.${address}`);
    for (let attempt = 0; attempt < 10; attempt++) await buckets.take("192.0.2.1");
    const count = async () =>
      Number(
        (await (sql as PostgresSql)`SELECT count(*) AS n FROM rate_limit_buckets`)[0]?.n ?? -1,
      );
    expect(await count()).toBe(501);
    // Not full yet: a single failure is refilled after half a second.
    expect(await deleteFullBuckets(sql as PostgresSql, now + 0.25)).toBe(0);
    now += 0.5;
    expect(await deleteFullBuckets(sql as PostgresSql, now)).toBe(500);
    expect(await count()).toBe(1);
    // The indebted one (4 - 10 = -6) is full after 5 s: until then it stays, and counts.
    expect(await buckets.wait("192.0.2.1")).toBe(3);
    expect(await deleteFullBuckets(sql as PostgresSql, now + 4.4)).toBe(0);
    now += 4.5;
    expect(await deleteFullBuckets(sql as PostgresSql, now)).toBe(1);
    // A deleted bucket is a full one.
    for (let attempt = 0; attempt < 4; attempt++) {
      expect(await buckets.takeIfAny("198.51.100.1")).toBe(0);
    }
    expect(await buckets.takeIfAny("198.51.100.1")).toBe(1);
  });
});
