// Rate limits with two service instances on one PostgreSQL database (issue 16): two real
// createServer() services on a throwaway cluster, as two `cairn serve` behind a load balancer.
// A key's requests and an address's failed authentications count once across both, however
// they alternate or arrive at once, and a database that fails the check answers 503, not 500.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import type { RateLimitOptions } from "../../src/server/http/rate-limit.js";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { captureLog } from "../helpers/log.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { fakeDashboard } from "./dashboard-helpers.js";
import { addProject, startTestServer, type TestServer } from "./helpers.js";

const clusterFor = postgresClusterPerFile();
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A token every 1000 s: nothing refills while a test runs, however slow the machine.
const slow = 0.001;

/** Two services on one new database, with these limits; the first makes the project. */
async function twoInstances(
  context: TestContext,
  limits: { rateLimit?: RateLimitOptions; failedAuthLimit?: RateLimitOptions },
): Promise<[TestServer, TestServer]> {
  const database = await clusterFor(context).createDatabase(undefined, { migrated: true });
  const directory = fakeDashboard();
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  const start = async () => {
    const server = await startTestServer({ database, dashboard: { directory }, ...limits });
    cleanups.push(() => server.stop());
    return server;
  };
  const a = await start();
  return [a, await start()];
}

const wrongKey = (attempt: number) => ({ "x-api-key": `wrong-key-${attempt}-0123456789abc` });

describe("rate limits of two instances on one PostgreSQL database", () => {
  it("count an API key's requests once: 429 after the burst in total, and another key goes on", async (context) => {
    const [a, b] = await twoInstances(context, {
      rateLimit: { requestsPerSecond: slow, burst: 5 },
    });
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let request = 0; request < 8; request++) {
      const response = await (request % 2 === 0 ? a : b).call("GET", "/analytics/traces");
      statuses.push(response.status);
      if (response.status === 429) refused = response;
      else await response.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused?.json()).toEqual({
      error: "rate_limited",
      message: expect.stringMatching(
        /^this API key is over 0\.001 requests per second; retry after \d+ s$/,
      ),
    });
    // Another project's key is not slowed, on either instance.
    await addProject(a, "other", "other-project-key-0123456789");
    for (const server of [a, b, a, b]) {
      const other = await server.call("GET", "/analytics/traces", undefined, {
        "x-api-key": "other-project-key-0123456789",
      });
      expect(other.status).toBe(200);
      await other.arrayBuffer();
    }
    // And the first is still refused on both.
    expect((await a.call("GET", "/analytics/traces")).status).toBe(429);
    expect((await b.call("GET", "/analytics/traces")).status).toBe(429);
  });

  it("let no more than the burst through when requests arrive at once on both", async (context) => {
    const [a, b] = await twoInstances(context, {
      rateLimit: { requestsPerSecond: slow, burst: 5 },
    });
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? a : b).call("GET", "/analytics/traces"),
      ),
    );
    const statuses = responses.map((response) => response.status);
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(35);
  });

  it("count an address's failed authentications once, so rotating instances guesses no more", async (context) => {
    const [a, b] = await twoInstances(context, {
      failedAuthLimit: { requestsPerSecond: slow, burst: 3 },
    });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const server = attempt % 2 === 0 ? a : b;
      const response = await server.call("GET", "/analytics/traces", undefined, wrongKey(attempt));
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    // The right key from that address waits too, on both; so does the dashboard's sign-in.
    for (const server of [a, b]) {
      const right = await server.call("GET", "/analytics/traces");
      expect(right.status).toBe(429);
      expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // The message is protocol-and-abuse.test.ts's: the same on either store.
      expect(((await right.json()) as { error: string }).error).toBe("rate_limited");
      const signIn = await fetch(`${server.server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.server.url },
        body: JSON.stringify({ apiKey: server.apiKey }),
      });
      expect(signIn.status).toBe(429);
    }
  });

  it("count failed sign-ins on one instance's dashboard with failed keys on the other's API", async (context) => {
    const [a, b] = await twoInstances(context, {
      failedAuthLimit: { requestsPerSecond: slow, burst: 4 },
    });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const response =
        attempt % 2 === 0
          ? await a.call("GET", "/analytics/traces", undefined, wrongKey(attempt))
          : await fetch(`${b.server.url}/auth/login`, {
              method: "POST",
              headers: { "content-type": "application/json", origin: b.server.url },
              body: JSON.stringify({ apiKey: `wrong-key-${attempt}-0123456789abc` }),
            });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
  });

  it("make each guess past the burst, sent at once on both, a wait of its own", async (context) => {
    const [a, b] = await twoInstances(context, {
      failedAuthLimit: { requestsPerSecond: slow, burst: 3 },
    });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, attempt) =>
        (attempt % 2 === 0 ? a : b).call("GET", "/analytics/traces", undefined, wrongKey(attempt)),
      ),
    );
    const statuses = responses.map((response) => response.status);
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    const answered = statuses.filter((status) => status === 401).length;
    expect(answered + statuses.filter((status) => status === 429).length).toBe(30);
    expect(answered).toBeGreaterThanOrEqual(3);
    // Attempts looked at together may pass the burst; each one past it is a debt of 1000 s
    // (the rate's), waited off before the address is looked at again, on either instance.
    for (const server of [a, b]) {
      const next = await server.call("GET", "/analytics/traces");
      expect(next.status).toBe(429);
      expect(Number(next.headers.get("retry-after"))).toBeGreaterThan((answered - 3) / slow);
      await next.arrayBuffer();
    }
  });

  it("answer 503 with Retry-After when the database fails the check, logged once, and recover", async (context) => {
    const [a] = await twoInstances(context, {});
    const admin = await openPostgres(a.database as string, { maxConnections: 1 });
    cleanups.push(() => admin.end({ timeout: 1 }));
    const log = captureLog();
    cleanups.push(() => log.restore());
    await admin`ALTER TABLE rate_limit_buckets RENAME TO rate_limit_buckets_gone`;
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await a.call("GET", "/analytics/traces");
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(await response.json()).toEqual({
        error: "unavailable",
        message:
          "the rate limit could not be checked: the service's database did not answer; retry shortly",
      });
    }
    const failures = log.messages.filter((each) =>
      each.message.includes("rate limit could not be checked"),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]?.level).toBe("error");
    await admin`ALTER TABLE rate_limit_buckets_gone RENAME TO rate_limit_buckets`;
    const back = await a.call("GET", "/analytics/traces");
    expect(back.status).toBe(200);
    await back.arrayBuffer();
    expect(log.messages.some((each) => each.message.includes("is checked again"))).toBe(true);
  });
});
