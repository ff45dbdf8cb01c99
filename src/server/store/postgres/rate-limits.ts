import { createHash } from "node:crypto";
import { log } from "../../../core/logger.js";
import {
  type LimitBuckets,
  type RateLimitOptions,
  type RateLimitStore,
  secondsUntilToken,
} from "../../http/rate-limit.js";
import type { PostgresSql } from "./connection.js";

export interface PostgresRateLimitOptions {
  /**
   * The time, in seconds since the epoch, of each statement (tests move it). Default: the
   * database's clock, `clock_timestamp()`, the same for every instance.
   */
  readonly now?: () => number;
}

/**
 * The rate limits' buckets in the database (rate_limit_buckets, rate-limits-schema.ts), shared
 * by every instance on it: a key or an address that moves between instances finds its bucket
 * as it left it. Each take is one statement, which locks the bucket's row, so that requests at
 * the same moment on any instances never both get its last token. Keys are stored as their
 * SHA-256 under the limit's name, never as they are. The refill follows TokenBuckets: up to the
 * burst at the limit's rate, a debt allowed, the wait in whole seconds.
 */
export function postgresRateLimits(
  sql: PostgresSql,
  options: PostgresRateLimitOptions = {},
): RateLimitStore {
  const at = () => options.now?.() ?? null;
  return {
    buckets(name: string, limit: RateLimitOptions): LimitBuckets {
      const rowKey = (key: string) =>
        `${name}:${createHash("sha256").update(key).digest("base64url")}`;
      const take = (key: string, debt: boolean) => takeToken(sql, rowKey(key), limit, debt, at());
      return {
        async takeIfAny(key) {
          const { taken, tokens } = await take(key, false);
          // A refusal reads the bucket as the statement began: it may have held a token then.
          return taken ? 0 : Math.max(1, secondsUntilToken(tokens, limit.requestsPerSecond));
        },
        async take(key) {
          await take(key, true);
        },
        async wait(key) {
          const [row] = await sql<Array<{ tokens: number }>>`
            SELECT cairn_bucket_tokens(tokens, updated_at,
              coalesce(${at()}::float8, extract(epoch FROM clock_timestamp())::float8),
              ${limit.requestsPerSecond}::float8, ${limit.burst}::float8) AS tokens
            FROM rate_limit_buckets WHERE key = ${rowKey(key)}`;
          return secondsUntilToken(row?.tokens ?? limit.burst, limit.requestsPerSecond);
        },
      };
    },
  };
}

/**
 * Takes a token from the bucket `key` (made full when there is none) in one statement: when it
 * holds one, or whatever it holds with `debt`. Returns whether it took one, and what the bucket
 * held when the statement began (for the wait of a refusal).
 */
async function takeToken(
  sql: PostgresSql,
  key: string,
  limit: RateLimitOptions,
  debt: boolean,
  at: number | null,
): Promise<{ taken: boolean; tokens: number }> {
  const rate = limit.requestsPerSecond;
  const { burst } = limit;
  const [row] = await sql<Array<{ taken: boolean; tokens: number }>>`
    WITH clock AS (
      SELECT coalesce(${at}::float8, extract(epoch FROM clock_timestamp())::float8) AS now
    ), taken AS (
      INSERT INTO rate_limit_buckets AS bucket (key, tokens, updated_at, rate, burst)
      SELECT ${key}, ${burst}::float8 - 1, now, ${rate}::float8, ${burst}::float8 FROM clock
      WHERE ${debt}::boolean OR ${burst}::float8 >= 1
      ON CONFLICT (key) DO UPDATE SET
        tokens = cairn_bucket_tokens(bucket.tokens, bucket.updated_at, excluded.updated_at,
          excluded.rate, excluded.burst) - 1,
        -- A statement that waited for the row may carry an earlier time than the one before it.
        updated_at = greatest(bucket.updated_at, excluded.updated_at),
        rate = excluded.rate,
        burst = excluded.burst
      WHERE ${debt}::boolean OR cairn_bucket_tokens(bucket.tokens, bucket.updated_at,
        excluded.updated_at, excluded.rate, excluded.burst) >= 1
      RETURNING 1
    )
    SELECT
      EXISTS (SELECT FROM taken) AS taken,
      coalesce(
        (SELECT cairn_bucket_tokens(b.tokens, b.updated_at, clock.now, ${rate}::float8,
           ${burst}::float8) FROM rate_limit_buckets b WHERE b.key = ${key}),
        ${burst}::float8
      ) AS tokens
    FROM clock`;
  return row ?? { taken: false, tokens: 0 };
}

/**
 * Deletes the buckets that are full again (`at` in seconds since the epoch; default the
 * database's clock): a full bucket is the same as none, so a flood of distinct keys or
 * addresses leaves rows for as long as their buckets take to refill. Returns how many went.
 */
export async function deleteFullBuckets(sql: PostgresSql, at?: number): Promise<number> {
  const deleted = await sql`
    DELETE FROM rate_limit_buckets
    WHERE cairn_bucket_tokens(tokens, updated_at,
      coalesce(${at ?? null}::float8, extract(epoch FROM clock_timestamp())::float8),
      rate, burst) >= burst`;
  return deleted.count;
}

/**
 * Deletes the full buckets every `everyMs` (default a minute) until the returned function is
 * called. Every instance does; a failure is logged and tried again next time.
 */
export function keepDeletingFullBuckets(sql: PostgresSql, everyMs = 60_000): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(() => deleteFullBuckets(sql))
      .catch((error: unknown) => log.warn("could not delete the full rate-limit buckets", error));
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
