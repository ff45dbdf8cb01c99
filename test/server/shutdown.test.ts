import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/server/app.js";
import { defaultRateLimit } from "../../src/server/http/rate-limit.js";
import { inProcessIngester } from "../../src/server/ingest/batch-ingester.js";
import { openDatabase } from "../../src/server/store/database.js";
import { ProjectStore } from "../../src/server/store/projects.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { sqliteStore } from "../../src/server/store/sqlite-store.js";

// A request that reaches the app while the server shuts down (on a connection already open)
// is refused with 503 and Retry-After, before it can touch the store.
describe("while the server shuts down", () => {
  const folder = mkdtempSync(join(tmpdir(), "cairn-closing-"));
  const db = openDatabase(join(folder, "cairn.db"));
  const projects = new ProjectStore(db);
  const { apiKey } = projects.createProject("p", "closing-key-1234567890");
  let closing = false;
  const store = sqliteStore(db, new SpanStore(db));
  const app = createApp({
    store,
    db,
    ingester: inProcessIngester(store.spans),
    bodyLimitBytes: 1024 * 1024,
    rateLimit: defaultRateLimit,
    isClosing: () => closing,
  });

  afterAll(() => {
    db.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("answers 503 with Retry-After", async () => {
    const headers = { "x-api-key": apiKey };
    expect((await app.request("/analytics/traces", { headers })).status).toBe(200);
    closing = true;
    const refused = await app.request("/analytics/traces", { headers });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await refused.json()).toEqual({
      error: "unavailable",
      message: "the server is shutting down; retry shortly",
    });
  });
});
