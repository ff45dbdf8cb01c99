import { ApiRequestError, getTrace, listTraces } from "cairn-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

const traceA = `tr_${"a".repeat(32)}`;
const traceB = `tr_${"b".repeat(32)}`;

describe("POST /traces and reading traces back", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it("stores a batch, and a retried batch adds nothing", async () => {
    const root = span({ span_id: "1000000000000001", name: "support-agent" });
    const child = span({
      span_id: "1000000000000002",
      parent_span_id: "1000000000000001",
      kind: "llm",
      name: "draft",
      model: "gpt-4o-mini",
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      cost_usd: 0.000027,
      tags: ["prod"],
      session_id: "ses-1",
    });
    const batch = { resource, spans: [child, root] };
    const first = await t.call("POST", "/traces", batch);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ accepted: 2, duplicates: 0 });
    const retry = await t.call("POST", "/traces", batch);
    expect(await retry.json()).toEqual({ accepted: 0, duplicates: 2 });

    const trace = await (await t.call("GET", `/traces/${traceA}`)).json();
    expect(trace).toMatchObject({
      trace_id: traceA,
      name: "support-agent",
      kind: "agent",
      span_count: 2,
      status: "ok",
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      cost_usd: 0.000027,
      session_id: "ses-1",
      tags: ["prod"],
      scores: [],
    });
    expect(trace.spans).toHaveLength(1);
    expect(trace.spans[0].name).toBe("support-agent");
    expect(trace.spans[0].children.map((each: { name: string }) => each.name)).toEqual(["draft"]);
  });

  it("lists traces with filters, sorting and cursor pagination", async () => {
    const spans = Array.from({ length: 5 }, (_, index) =>
      span({
        trace_id: `tr_${index.toString(16).padStart(32, "c")}`,
        span_id: `20000000000000${index.toString(16).padStart(2, "0")}`,
        name: index % 2 === 0 ? "even" : "odd",
        start_time: `2026-11-21T10:00:0${index}.000Z`,
        end_time: `2026-11-21T10:00:0${index}.500Z`,
        duration_ms: 500 + index,
        status: index === 4 ? "error" : "ok",
      }),
    );
    await t.call("POST", "/traces", { resource, spans });
    const page = async (query: string) =>
      (
        await t.call(
          "GET",
          `/analytics/traces?period_start=2026-11-21&period_end=2026-11-21&${query}`,
        )
      ).json();
    const first = await page("limit=2");
    expect(first.period_start).toBe("2026-11-21");
    expect(first.period_end).toBe("2026-11-21");
    expect(first.traces).toHaveLength(2);
    const second = await page(`limit=2&cursor=${first.next_cursor}`);
    const third = await page(`limit=2&cursor=${second.next_cursor}`);
    expect(third.next_cursor).toBeNull();
    const seen = [...first.traces, ...second.traces, ...third.traces].map(
      (trace) => trace.trace_id,
    );
    expect(new Set(seen).size).toBe(5);
    expect((await page("name=even")).traces).toHaveLength(3);
    expect(
      (await page("status=error")).traces.map((trace: { status: string }) => trace.status),
    ).toEqual(["error"]);
    const byLatency = await page("sort=latency&order=asc&limit=1");
    expect(byLatency.traces[0].duration_ms).toBeCloseTo(500, 0);
  });

  it("pages through traces sorted by cost, each once, most expensive first", async () => {
    const spans = [0.5, 0.1, 0.9, 0.3, 0.7].map((cost, index) =>
      span({
        trace_id: `tr_${index.toString(16).padStart(32, "e")}`,
        span_id: `30000000000000${index.toString(16).padStart(2, "0")}`,
        start_time: "2026-11-19T08:00:00.000Z",
        end_time: "2026-11-19T08:00:01.000Z",
        kind: "llm",
        cost_usd: cost,
        tags: ["billing"],
      }),
    );
    await t.call("POST", "/traces", { resource, spans });
    const costs: number[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const query = `period_start=2026-11-19&period_end=2026-11-19&tag=billing&sort=cost&limit=2${cursor}`;
      const body = await (await t.call("GET", `/analytics/traces?${query}`)).json();
      costs.push(...body.traces.map((trace: { cost_usd: number }) => trace.cost_usd));
      if (body.next_cursor === null) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(costs).toEqual([0.9, 0.7, 0.5, 0.3, 0.1]);
  });

  it("finds traces by tag, model and session", async () => {
    const all = async (query: string) =>
      (
        await (await t.call("GET", `/analytics/traces?period_start=2026-11-01&${query}`)).json()
      ).traces.map((trace: { trace_id: string }) => trace.trace_id);
    expect(await all("tag=prod")).toEqual([traceA]);
    expect(await all("model=gpt-4o-mini")).toEqual([traceA]);
    expect(await all("session_id=ses-1")).toEqual([traceA]);
    expect(await all("tag=missing")).toEqual([]);
  });
});

describe("bad input leaves the store unchanged", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ bodyLimitBytes: 64 * 1024 });
  });
  afterAll(async () => {
    await t.stop();
  });

  const count = async () =>
    (await (await t.call("GET", "/analytics/traces?period_start=2026-01-01&limit=200")).json())
      .traces.length;

  it.each([
    ["malformed JSON", "{not json", 400, "invalid_request", /not valid JSON/],
    [
      "a wrong type",
      { resource, spans: [span({ duration_ms: "long" })] },
      400,
      "invalid_request",
      /span 0 .* "spans.0.duration_ms"/,
    ],
    [
      "an unknown field",
      { resource, spans: [span({ colour: "red" })] },
      400,
      "invalid_request",
      /"spans.0.colour" is not supported/,
    ],
    [
      "one bad span in a batch",
      {
        resource,
        spans: [span({ trace_id: traceB }), span({ trace_id: traceB, kind: "database" })],
      },
      400,
      "invalid_request",
      /^span 1 \(span_id [0-9a-f]{16}\) is invalid, so nothing was stored/,
    ],
    [
      "an oversized body",
      { resource, spans: [span({ input: "x".repeat(70_000) })] },
      413,
      "payload_too_large",
      /over 65536 bytes/,
    ],
  ])("%s", async (_label, body, status, code, message) => {
    const before = await count();
    const response = await t.call("POST", "/traces", body);
    expect(response.status).toBe(status);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    const error = await response.json();
    expect(error.error).toBe(code);
    expect(error.message).toMatch(message);
    expect(Object.keys(error).sort()).toEqual(["error", "message"]);
    expect(await count()).toBe(before);
  });

  it("refuses an oversized body sent in chunks, without a Content-Length", async () => {
    const before = await count();
    const text = JSON.stringify({ resource, spans: [span({ input: "y".repeat(70_000) })] });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(text);
        for (let offset = 0; offset < bytes.length; offset += 8192) {
          controller.enqueue(bytes.slice(offset, offset + 8192));
        }
        controller.close();
      },
    });
    const response = await fetch(`${t.server.url}/traces`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await response.json()).error).toBe("payload_too_large");
    expect(await count()).toBe(before);
  });

  it("rejects a wrong content type with 415", async () => {
    const response = await t.call("POST", "/traces", "x=1", { "content-type": "text/plain" });
    expect(response.status).toBe(415);
    expect((await response.json()).error).toBe("unsupported_media_type");
  });

  it("answers 401 to a missing or wrong key, 404 to unknown ids and routes", async () => {
    const noKey = await fetch(`${t.server.url}/analytics/traces`);
    expect(noKey.status).toBe(401);
    expect((await noKey.json()).message).toContain("X-API-Key");
    const wrongKey = await t.call("GET", "/analytics/traces", undefined, {
      "x-api-key": "wrong-key-123456789",
    });
    expect(wrongKey.status).toBe(401);
    const bearer = await fetch(`${t.server.url}/analytics/traces`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(bearer.status).toBe(200);
    const unknownTrace = await t.call("GET", `/traces/tr_${"f".repeat(32)}`);
    expect(unknownTrace.status).toBe(404);
    expect(await unknownTrace.json()).toEqual({
      error: "not_found",
      message: `no trace tr_${"f".repeat(32)}`,
    });
    const badId = await t.call("GET", "/traces/tr_123");
    expect(badId.status).toBe(400);
    const unknownRoute = await t.call("GET", "/nowhere");
    expect(unknownRoute.status).toBe(404);
    expect((await unknownRoute.json()).error).toBe("not_found");
    const badQuery = await t.call("GET", "/analytics/traces?period_start=yesterday&colour=red");
    expect(badQuery.status).toBe(400);
    expect((await badQuery.json()).message).toMatch(
      /query parameter "period_start": must be a date as YYYY-MM-DD/,
    );
  });
});

describe("the rate limit per API key", () => {
  let t: TestServer;
  beforeAll(async () => {
    // Stored on the main thread: the first batch to an ingest worker waits for the worker to
    // start (a second or more on a loaded machine), long enough to refill the bucket.
    t = await startTestServer({ rateLimit: { requestsPerSecond: 1, burst: 3 }, ingestWorkers: 0 });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("answers 429 with Retry-After once a key is over its rate, storing nothing", async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let index = 0; index < 5; index++) {
      const response = await t.call("POST", "/traces", {
        resource,
        spans: [span({ trace_id: `tr_${"7".repeat(31)}${index}` })],
      });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
      else await response.body?.cancel();
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await limited?.json()).toMatchObject({ error: "rate_limited" });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await t.call("GET", `/traces/tr_${"7".repeat(31)}3`);
    expect(after.status).toBe(404);
  });
});

describe("dates in queries", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it("rejects a date that does not exist instead of rolling it over", async () => {
    const response = await t.call("GET", "/analytics/traces?period_start=2026-02-30");
    expect(response.status).toBe(400);
    expect((await response.json()).message).toContain('"period_start": is not a real date');
  });
});

describe("SDK: listTraces and getTrace", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    const root = span({ trace_id: traceA, span_id: "2000000000000001", name: "agent-run" });
    const child = span({
      trace_id: traceA,
      span_id: "2000000000000002",
      parent_span_id: "2000000000000001",
      kind: "tool",
      name: "lookup",
    });
    await t.call("POST", "/traces", { resource, spans: [root, child] });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("read the list and one trace, spans as a tree, from the service each call names", async () => {
    const connection = { endpoint: t.server.url, apiKey: t.apiKey };
    const page = await listTraces({ ...connection, limit: 5 });
    expect(page.traces.map((trace) => trace.trace_id)).toEqual([traceA]);
    expect(page.traces[0]).toMatchObject({ name: "agent-run", span_count: 2 });
    const trace = await getTrace(traceA, connection);
    expect(trace.spans.map((each) => each.name)).toEqual(["agent-run"]);
    expect(trace.spans[0]?.children.map((each) => each.name)).toEqual(["lookup"]);
  });

  it("throw the service's error as a class, with its code", async () => {
    const connection = { endpoint: t.server.url, apiKey: t.apiKey };
    const missing = await getTrace(traceB, connection).catch((error: unknown) => error);
    expect(ApiRequestError.isInstance(missing)).toBe(true);
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
    const refused = await listTraces({ endpoint: t.server.url, apiKey: "wrong-key-0123456789" })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 401 });
  });
});
