import type { Context, MiddlewareHandler } from "hono";
import type { Caller, Project } from "../store/projects.js";
import type { ProjectRepository } from "../store/store.js";
import { ApiError } from "./api-error.js";
import {
  defaultFailedAuthLimit,
  type LimitBuckets,
  limitBuckets,
  memoryRateLimits,
  type RateLimitOptions,
  type RateLimitStore,
} from "./rate-limit.js";

export interface AuthVariables {
  project: Project;
  /** The key that made the request, for audit records (never the key itself). */
  actor: string;
  /** The sandbox token that made the request, if one did (Caller.sandboxTokenId). */
  sandboxTokenId: string | undefined;
  /** The dashboard session that made the request, if its cookie did (Caller.dashboardSessionId). */
  dashboardSessionId: string | undefined;
  /** The agent web channel whose token made the request, if one did (Caller.agentWebChannelId). */
  agentWebChannelId: string | undefined;
}

export interface AuthOptions {
  /**
   * Another way in, asked when a request carries no project's API key: a sandbox token, the
   * exec WebSocket's token, the dashboard's session cookie. `presented` is the key the request carried (`X-API-Key` or
   * `Authorization: Bearer`) that is no project's, if any. Undefined: this request has no such
   * credential; a string: it has one, and this is what is wrong with it (401). A credential
   * that is valid but does not reach this request throws its 403.
   */
  readonly alternative?: (
    c: Context,
    presented: string | undefined,
  ) => Promise<Caller | string | undefined>;
  /**
   * The failed attempts of each client address, shared with the other ways in (the dashboard's
   * sign-in). Default: 2/s, burst 20, every client as one address.
   */
  readonly failures?: FailedAuthentications;
}

/**
 * Failed authentications per client address: a few mistakes, not a key search. Past the limit
 * the address is told to wait (429) before its next credential is even looked at. The count
 * is the store's: with several instances on one PostgreSQL database, an address that moves from
 * one instance to another finds its failures there too.
 *
 * A request is checked before its credential is looked at and counted once it failed, so
 * attempts sent at the same moment may all be looked at: each one past the limit is then a debt
 * the address waits off before its next attempt, and over time no address makes more attempts
 * than the limit's rate.
 */
export class FailedAuthentications {
  private readonly buckets: LimitBuckets;

  constructor(
    limit: RateLimitOptions = defaultFailedAuthLimit,
    private readonly clientAddress: (c: Context) => string = () => "unknown",
    store: RateLimitStore = memoryRateLimits(),
  ) {
    this.buckets = limitBuckets(store, "failed-auth", limit);
  }

  /** Throws 429 when the request's address has failed too often of late. */
  async check(c: Context): Promise<void> {
    const retryAfter = await this.buckets.wait(this.clientAddress(c));
    if (retryAfter > 0) {
      throw new ApiError(
        "rate_limited",
        `too many failed authentications from this address; retry after ${retryAfter} s`,
        { retryAfter },
      );
    }
  }

  /** Counts one failed attempt of the request's address. */
  async record(c: Context): Promise<void> {
    await this.buckets.take(this.clientAddress(c));
  }
}

/** The API key a request carries: `X-API-Key`, else `Authorization: Bearer`; trimmed. */
export function apiKeyOf(header: (name: string) => string | undefined): string | undefined {
  const key = header("x-api-key") ?? /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1];
  return key?.trim();
}

/**
 * The API key (`X-API-Key`, or `Authorization: Bearer`) picks the project; every handler
 * after this one sees only that project's data. A client address that keeps failing is told
 * to wait (429) before its next key is even looked at.
 */
export function requireApiKey(
  projects: ProjectRepository,
  options: AuthOptions = {},
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const failures = options.failures ?? new FailedAuthentications();
  return async (c, next) => {
    await failures.check(c);
    const caller = await identify(c, projects, options);
    if (typeof caller === "string") {
      await failures.record(c);
      throw new ApiError("unauthorized", caller);
    }
    c.set("project", caller.project);
    c.set("actor", caller.actor);
    c.set("sandboxTokenId", caller.sandboxTokenId);
    c.set("dashboardSessionId", caller.dashboardSessionId);
    c.set("agentWebChannelId", caller.agentWebChannelId);
    await next();
  };
}

async function identify(
  c: Context,
  projects: ProjectRepository,
  options: AuthOptions,
): Promise<Caller | string> {
  const key = apiKeyOf((name) => c.req.header(name));
  const presented = key === "" ? undefined : key;
  const caller = presented === undefined ? undefined : await projects.callerForKey(presented);
  if (caller !== undefined) return caller;
  return (
    (await options.alternative?.(c, presented)) ??
    (presented === undefined
      ? "no API key: send it in the X-API-Key header (or Authorization: Bearer)"
      : "the API key is not valid")
  );
}
