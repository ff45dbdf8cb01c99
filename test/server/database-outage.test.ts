// A service on PostgreSQL whose database stops answering: requests that need it get 503
// `unavailable` with Retry-After and the API's error body, never a 500 or a stack trace, and
// the log says so once rather than at every request.

import { afterAll, describe, expect, it } from "vitest";
import type { PostgresCluster } from "../helpers/postgres-cluster.js";
import { postgresMissing, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("a service whose PostgreSQL database stops", () => {
  it("answers 503 unavailable with Retry-After, logged once, and no stack", async (context) => {
    const missing = postgresMissing();
    if (missing !== undefined) context.skip(missing);
    const cluster: PostgresCluster = await startPostgresCluster();
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await cluster.stop();
    });
    const logged: string[] = [];
    const t: TestServer = await startTestServer({
      database: await cluster.createDatabase(),
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (message: string) => logged.push(message),
        error: (message: string) => logged.push(message),
      },
    });
    cleanups.push(() => t.stop());
    const stored = await t.call("POST", "/traces", { resource, spans: [span()] });
    expect(stored.status).toBe(200);

    await cluster.stop();
    stopped = true;
    const requests = [
      ["GET", "/analytics/traces", undefined],
      ["POST", "/traces", { resource, spans: [span()] }],
      ["GET", "/analytics/metrics", undefined],
    ] as const;
    for (const [method, path, body] of [...requests, ...requests]) {
      const answer = await t.call(method, path, body);
      expect({ path, status: answer.status }).toEqual({ path, status: 503 });
      expect(answer.headers.get("retry-after")).toBe("5");
      const error = (await answer.json()) as { error: string; message: string };
      expect(error.error).toBe("unavailable");
      expect(error.message).toMatch(/database did not answer|database is not answering/);
    }
    // Each thing that failed is said once, not once per request.
    expect(logged.length).toBeGreaterThan(0);
    expect(new Set(logged).size).toBe(logged.length);
    expect(logged.join("\n")).not.toMatch(/\n\s+at /);
  });
});
