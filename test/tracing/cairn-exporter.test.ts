import { configure, type ExportStats, exportStats, flush, observe, shutdown } from "cairn-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exportBatchSchema } from "../../src/core/wire/index.js";
import { type Collector, startCollector } from "../helpers/collector.js";

const fastRetries = { scheduledDelayMs: 10, maxRetryDelayMs: 50 };

// exportStats() counts over the life of the program; each test looks at what it added.
function statsSince(before: ExportStats) {
  const now = exportStats();
  return {
    queued: now.queued,
    exported: now.exported - before.exported,
    dropped: now.dropped - before.dropped,
    retries: now.retries - before.retries,
    lastError: now.lastError,
  };
}

describe("the Cairn exporter", () => {
  let collector: Collector;
  let before: ExportStats;

  beforeEach(async () => {
    collector = await startCollector();
    before = exportStats();
  });

  afterEach(async () => {
    await shutdown();
    await collector.stop();
  });

  it("posts the documented JSON format to {endpoint}/traces with the API key", async () => {
    configure({ endpoint: collector.url, apiKey: "key-123", serviceName: "support-bot" });
    const retrieve = observe(async () => ["doc"], { kind: "retrieval" });
    await observe(async () => retrieve(), { kind: "agent", spanName: "agent" })();
    await flush();
    expect(collector.requests).toHaveLength(1);
    const [request] = collector.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/traces");
    expect(request?.headers["x-api-key"]).toBe("key-123");
    expect(request?.headers["content-type"]).toBe("application/json");
    const batch = exportBatchSchema.parse(request?.json());
    expect(batch.resource).toEqual({
      service_name: "support-bot",
      sdk_name: "cairn",
      sdk_version: expect.any(String),
    });
    expect(batch.spans.map((span) => span.kind).sort()).toEqual(["agent", "retrieval"]);
  });

  it("reads CAIRN_ENDPOINT and CAIRN_API_KEY when not configured", async () => {
    process.env.CAIRN_ENDPOINT = collector.url;
    process.env.CAIRN_API_KEY = "from-env";
    try {
      configure();
      observe(() => 1)();
      await flush();
    } finally {
      delete process.env.CAIRN_ENDPOINT;
      delete process.env.CAIRN_API_KEY;
    }
    expect(collector.requests[0]?.headers["x-api-key"]).toBe("from-env");
  });

  it("retries 500 and 429, honouring Retry-After, and delivers each span once", async () => {
    collector.answerNext(
      { status: 500, body: '{"error":"internal","message":"boom"}' },
      { status: 429, headers: { "retry-after": "1" } },
    );
    configure({ endpoint: collector.url, batch: fastRetries });
    observe(() => "a", { spanName: "first" })();
    observe(() => "b", { spanName: "second" })();
    await collector.waitFor(() => collector.requests.length >= 3);
    // The collector has the request; flush() waits until the client has its answer too.
    await flush();
    const [failed, limited, delivered] = collector.requests;
    expect([failed?.status, limited?.status, delivered?.status]).toEqual([500, 429, 200]);
    // The backoff alone would retry within 50 ms; the collector asked for a second.
    expect((delivered?.receivedAt ?? 0) - (limited?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
    expect(collector.spans().map((span) => span.name)).toEqual(["first", "second"]);
    expect(statsSince(before)).toMatchObject({ exported: 2, dropped: 0, retries: 2, queued: 0 });
    expect(exportStats().lastError).toContain("answered 429");
  });

  it("keeps spans while the collector is down and delivers them when it is back", async () => {
    const url = collector.url;
    collector.goDown();
    configure({ endpoint: url, batch: fastRetries });
    for (let index = 0; index < 20; index++) observe(() => index, { spanName: `call-${index}` })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(statsSince(before).retries).toBeGreaterThan(0);
    expect(exportStats().queued).toBe(20);
    await collector.start();
    await collector.waitFor(() => collector.spans().length >= 20);
    await flush();
    const names = collector.spans().map((span) => span.name);
    expect(names).toHaveLength(20);
    expect(new Set(names).size).toBe(20);
    expect(statsSince(before)).toMatchObject({ exported: 20, dropped: 0, queued: 0 });
  });

  it("bounds the queue and counts what it drops", async () => {
    const url = collector.url;
    collector.goDown();
    configure({ endpoint: url, batch: { ...fastRetries, maxQueueSize: 10, maxBatchSize: 5 } });
    for (let index = 0; index < 25; index++) observe(() => index)();
    expect(statsSince(before).dropped).toBeGreaterThanOrEqual(15);
    expect(exportStats().queued).toBeLessThanOrEqual(10);
  });

  it("does not retry a request the collector rejects, and says why", async () => {
    collector.answerNext({
      status: 401,
      body: '{"error":"unauthorized","message":"invalid API key"}',
    });
    configure({ endpoint: collector.url, apiKey: "wrong", batch: fastRetries });
    observe(() => 1)();
    await flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(collector.requests).toHaveLength(1);
    expect(statsSince(before)).toMatchObject({ exported: 0, dropped: 1, retries: 0 });
    expect(exportStats().lastError).toMatch(/answered 401: invalid API key \(check the API key/);
  });

  it("flushes spans to the old destination when configure() is called again", async () => {
    const second = await startCollector();
    try {
      configure({ endpoint: collector.url, batch: { scheduledDelayMs: 60_000 } });
      observe(() => 1, { spanName: "before" })();
      configure({ endpoint: second.url, batch: { scheduledDelayMs: 60_000 } });
      // No flush(): the batch delay is a minute, so only configure() can have sent it.
      await collector.waitFor(() => collector.spans().length === 1);
      expect(collector.spans().map((span) => span.name)).toEqual(["before"]);
      observe(() => 2, { spanName: "after" })();
      await flush();
      expect(second.spans().map((span) => span.name)).toEqual(["after"]);
    } finally {
      await second.stop();
    }
  });

  it("in immediate mode, resolves a root call only once its trace is delivered", async () => {
    configure({ endpoint: collector.url, exportMode: "immediate" });
    const child = observe(async () => "child", { spanName: "child" });
    await observe(async () => child(), { spanName: "handler" })();
    expect(collector.spans().map((span) => span.name)).toEqual(["child", "handler"]);
  });
});
