import type { MiddlewareHandler } from "hono";
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
    const bucket = this.refilled(key);
    if (bucket.tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.options.requestsPerSecond));
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

/**
 * A token bucket per API key: a key over its rate gets 429 with `Retry-After`, and other keys
 * are not slowed down. Runs after authentication, so unknown keys never fill the table.
 */
export function rateLimitPerKey(
  options: RateLimitOptions,
  now?: () => number,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const buckets = new TokenBuckets(options, now);
  return async (c, next) => {
    const key = c.get("actor");
    const retryAfter = buckets.wait(key);
    if (retryAfter > 0) {
      throw new ApiError(
        "rate_limited",
        `this API key is over ${options.requestsPerSecond} requests per second; retry after ${retryAfter} s`,
        { retryAfter },
      );
    }
    buckets.take(key);
    await next();
  };
}
