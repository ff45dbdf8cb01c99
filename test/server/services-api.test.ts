import { randomBytes } from "node:crypto";
import { configure, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getCosts, getMetrics } from "../../src/tracing/client/analytics.js";
import { listTraces } from "../../src/tracing/client/traces.js";
import { startTestServer, type TestServer } from "./helpers.js";

// Two services exporting over OTLP/JSON, as two apps of one project would: a checkout service
// whose model calls cost tokens, and a search service with one model call and a plain span.
const today = new Date().toISOString().slice(0, 10);
const startNanos = `${BigInt(Date.parse(`${today}T12:00:00Z`)) * 1_000_000n}`;
const endNanos = `${BigInt(Date.parse(`${today}T12:00:01Z`)) * 1_000_000n}`;
const kv = (key: string, value: object) => ({ key, value });

function llmSpan(traceId: string, name: string, tokens: number) {
  return {
    traceId,
    spanId: randomBytes(8).toString("hex"),
    name,
    startTimeUnixNano: startNanos,
    endTimeUnixNano: endNanos,
    attributes: [
      kv("gen_ai.operation.name", { stringValue: "chat" }),
      kv("gen_ai.request.model", { stringValue: "gpt-4o-mini" }),
      kv("gen_ai.usage.input_tokens", { intValue: String(tokens) }),
      kv("gen_ai.usage.output_tokens", { intValue: "0" }),
    ],
  };
}

function request(service: string, spans: object[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [kv("service.name", { stringValue: service })] },
        scopeSpans: [{ spans }],
      },
    ],
  };
}

describe("traces and analytics by service", () => {
  let t: TestServer;
  const checkoutTrace = randomBytes(16).toString("hex");
  const searchTrace = randomBytes(16).toString("hex");

  beforeAll(async () => {
    t = await startTestServer();
    const post = async (body: object) => {
      const response = await fetch(`${t.server.url}/v1/traces`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "x-api-key": t.apiKey, "content-type": "application/json" },
      });
      expect(response.status).toBe(200);
    };
    await post(
      request("checkout", [
        llmSpan(checkoutTrace, "price cart", 1_000),
        llmSpan(checkoutTrace, "write receipt", 500),
      ]),
    );
    await post(request("search", [llmSpan(searchTrace, "rank", 200)]));
    // A span of the search service in the checkout trace: the trace is in both services.
    await post(request("search", [llmSpan(checkoutTrace, "find coupon", 100)]));
  });
  afterAll(async () => {
    await t.stop();
  });

  const json = async (path: string) => {
    const response = await t.call("GET", path);
    expect(response.status).toBe(200);
    return response.json();
  };

  it("filters the trace list by service: a trace with a span of that service", async () => {
    const ids = async (service: string) =>
      (await json(`/analytics/traces?service=${service}`)).traces.map(
        (trace: { trace_id: string }) => trace.trace_id,
      );
    expect(await ids("checkout")).toEqual([`tr_${checkoutTrace}`]);
    expect((await ids("search")).sort()).toEqual(
      [`tr_${checkoutTrace}`, `tr_${searchTrace}`].sort(),
    );
    expect(await ids("billing")).toEqual([]);
  });

  it("groups metrics and costs by service, and filters them to one", async () => {
    const metrics = await json("/analytics/metrics?group_by=service");
    expect(metrics.group_by).toBe("service");
    const byService = Object.fromEntries(
      metrics.groups.map((group: { key: string }) => [group.key, group]),
    );
    expect(byService.checkout).toMatchObject({ span_count: 2, prompt_tokens: 1_500 });
    expect(byService.search).toMatchObject({ span_count: 2, prompt_tokens: 300 });
    expect(metrics.totals).toMatchObject({ span_count: 4, prompt_tokens: 1_800 });

    const searchOnly = await json("/analytics/metrics?service=search&group_by=name");
    expect(searchOnly.service).toBe("search");
    expect(searchOnly.totals).toMatchObject({ span_count: 2, prompt_tokens: 300 });
    expect(searchOnly.groups.map((group: { key: string }) => group.key).sort()).toEqual([
      "find coupon",
      "rank",
    ]);

    const costs = await json("/analytics/costs?group_by=service");
    const checkoutCost = costs.groups.find((group: { key: string }) => group.key === "checkout");
    // gpt-4o-mini input at $0.15 per million tokens.
    expect(checkoutCost.cost_usd).toBeCloseTo((1_500 * 0.15) / 1e6, 12);

    const none = await json("/analytics/performance?service=billing");
    expect(none.totals.span_count).toBe(0);
    expect(none.groups).toEqual([]);
  });

  it("refuses an empty or overlong service with 400 naming it", async () => {
    for (const path of [
      "/analytics/traces?service=",
      `/analytics/metrics?service=${"s".repeat(257)}`,
    ]) {
      const response = await t.call("GET", path);
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body).toMatchObject({ error: "invalid_request" });
      expect(body.message).toContain('"service"');
    }
  });

  it("is offered by the SDK", async () => {
    configure({ endpoint: t.server.url, apiKey: t.apiKey, exporter: memoryExporter() });
    try {
      const metrics = await getMetrics({ groupBy: "service", service: "checkout" });
      expect(metrics.groups).toMatchObject([{ key: "checkout", span_count: 2 }]);
      const costs = await getCosts({ group_by: "service" });
      expect(costs.groups.map((group) => group.key).sort()).toEqual(["checkout", "search"]);
      const page = await listTraces({ service: "checkout" });
      expect(page.traces.map((trace) => trace.trace_id)).toEqual([`tr_${checkoutTrace}`]);
    } finally {
      await shutdown();
    }
  });
});
