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

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per API key: a key over its rate gets 429 with `Retry-After`, and other keys
 * are not slowed down. Runs after authentication, so unknown keys never fill the table.
 */
export function rateLimitPerKey(
  options: RateLimitOptions,
  now: () => number = () => performance.now(),
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const buckets = new Map<string, Bucket>();
  return async (c, next) => {
    const key = c.get("actor");
    const time = now();
    const bucket = buckets.get(key) ?? { tokens: options.burst, updatedAt: time };
    const elapsedSeconds = (time - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(
      options.burst,
      bucket.tokens + elapsedSeconds * options.requestsPerSecond,
    );
    bucket.updatedAt = time;
    buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / options.requestsPerSecond));
      throw new ApiError(
        "rate_limited",
        `this API key is over ${options.requestsPerSecond} requests per second; retry after ${retryAfter} s`,
        { retryAfter },
      );
    }
    bucket.tokens -= 1;
    await next();
  };
}
