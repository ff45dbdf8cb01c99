import type { MiddlewareHandler } from "hono";
import { log } from "../../core/logger.js";
import { ApiError } from "./api-error.js";
import type { AuthVariables } from "./auth.js";

export interface RateLimitOptions {
  /** Requests per second each API key may make, on average. */
  readonly requestsPerSecond: number;
  /** Requests a key may make at once after being idle. */
  readonly burst: number;
}

export const defaultRateLimit: RateLimitOptions = { requestsPerSecond: 200, burst: 400 };

/** Failed authentications a client address may make: a few mistakes, not a key search. */
export const defaultFailedAuthLimit: RateLimitOptions = { requestsPerSecond: 2, burst: 20 };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Seconds to wait before a bucket holding `tokens` has one, refilled at `requestsPerSecond`; 0
 * when it has one now. Whole seconds, at least 1, as `Retry-After` takes them.
 */
export function secondsUntilToken(tokens: number, requestsPerSecond: number): number {
  if (tokens >= 1) return 0;
  return Math.max(1, Math.ceil((1 - tokens) / requestsPerSecond));
}

/**
 * A token bucket per key (an API key, a client address), in at most `maxKeys` entries: the
 * longest idle go first, so a flood of distinct keys cannot grow the table.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly options: RateLimitOptions,
    private readonly now: () => number = () => performance.now(),
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds to wait before `key` has a token; 0 when it has one now. */
  wait(key: string): number {
    return secondsUntilToken(this.refilled(key).tokens, this.options.requestsPerSecond);
  }

  /** Takes a token from `key`'s bucket (it may go below zero: a debt paid back over time). */
  take(key: string): void {
    this.refilled(key).tokens -= 1;
  }

  private refilled(key: string): Bucket {
    const time = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.options.burst, updatedAt: time };
    const elapsedSeconds = (time - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(
      this.options.burst,
      bucket.tokens + elapsedSeconds * this.options.requestsPerSecond,
    );
    bucket.updatedAt = time;
    // Most recently used last: the first entry is the longest idle.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    return bucket;
  }
}

/** The token buckets of one limit, wherever they are kept. */
export interface LimitBuckets {
  /**
   * Takes a token from `key`'s bucket when it has one, and returns 0; else returns the seconds
   * to wait for one, and takes nothing. Two callers never both get the last token.
   */
  takeIfAny(key: string): Promise<number>;
  /** Takes a token whatever the bucket holds: it may go below zero, a debt paid back over time. */
  take(key: string): Promise<void>;
  /** Seconds to wait before `key` has a token; 0 when it has one now. */
  wait(key: string): Promise<number>;
}

/**
 * Where the service keeps the buckets of its rate limits: in this process (one instance, the
 * SQLite store), or in the database every instance shares (PostgreSQL,
 * store/postgres/rate-limits.ts), so that several instances allow each rate once, not once each.
 */
export interface RateLimitStore {
  /** The buckets of the limit called `name`: each limit's keys are its own. */
  buckets(name: string, options: RateLimitOptions): LimitBuckets;
}

/** Buckets in this process's memory, a table per limit (`now` in milliseconds, for tests). */
export function memoryRateLimits(now?: () => number): RateLimitStore {
  return {
    buckets(_name, options) {
      const buckets = new TokenBuckets(options, now);
      return {
        async takeIfAny(key) {
          const wait = buckets.wait(key);
          if (wait === 0) buckets.take(key);
          return wait;
        },
        async take(key) {
          buckets.take(key);
        },
        async wait(key) {
          return buckets.wait(key);
        },
      };
    },
  };
}

/**
 * The buckets of `limit` from `store`, whose failures (a database that does not answer) are
 * answered 503 `unavailable` with `Retry-After`, never a 500. The limit is not skipped instead:
 * the failed-authentication limit is what keeps keys from being guessed, and a database that
 * cannot take one row's statement cannot serve the request either. The first failure is
 * logged, then none until the store answers again.
 */
export function limitBuckets(
  store: RateLimitStore,
  limit: string,
  options: RateLimitOptions,
): LimitBuckets {
  const buckets = store.buckets(limit, options);
  let failing = false;
  const guarded =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      let result: R;
      try {
        result = await operation(...args);
      } catch (error) {
        if (!failing) {
          failing = true;
          log.error(
            `the ${limit} rate limit could not be checked; requests get 503 until its store answers again`,
            error,
          );
        }
        throw new ApiError(
          "unavailable",
          "the rate limit could not be checked: the service's database did not answer; retry shortly",
          { retryAfter: 5, cause: error },
        );
      }
      if (failing) {
        failing = false;
        log.info(`the ${limit} rate limit is checked again`);
      }
      return result;
    };
  return {
    takeIfAny: guarded((key: string) => buckets.takeIfAny(key)),
    take: guarded((key: string) => buckets.take(key)),
    wait: guarded((key: string) => buckets.wait(key)),
  };
}

/**
 * A token bucket per API key: a key over its rate gets 429 with `Retry-After`, and other keys
 * are not slowed down. Runs after authentication, so unknown keys never fill the table. The
 * buckets are the store's (default: this process's memory).
 */
export function rateLimitPerKey(
  options: RateLimitOptions,
  store: RateLimitStore = memoryRateLimits(),
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const buckets = limitBuckets(store, "api-key", options);
  return async (c, next) => {
    const retryAfter = await buckets.takeIfAny(c.get("actor"));
    if (retryAfter > 0) {
      throw new ApiError(
        "rate_limited",
        `this API key is over ${options.requestsPerSecond} requests per second; retry after ${retryAfter} s`,
        { retryAfter },
      );
    }
    await next();
  };
}
