import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { OTLPTraceExporter as HttpExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { SimpleSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

// A program instrumented with plain OpenTelemetry and OpenInference attributes, exporting with
// the official OTLP exporter: nothing from Cairn on the client side.
async function exportWith(exporter: SpanExporter, traceLabel: string): Promise<string> {
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer("otel-app");
  const root = tracer.startSpan(`agent-${traceLabel}`, {
    attributes: { "openinference.span.kind": "AGENT", "session.id": `session-${traceLabel}` },
  });
  const inRoot = trace.setSpan(ROOT_CONTEXT, root);
  tracer
    .startSpan(
      "chat gpt-4o-mini",
      {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": "gpt-4o-mini",
          "gen_ai.usage.input_tokens": 1_000_000,
          "gen_ai.usage.output_tokens": 1_000_000,
          "tag.tags": ["otlp"],
        },
      },
      inRoot,
    )
    .end();
  tracer
    .startSpan("plain-http-call", { attributes: { "http.request.method": "GET" } }, inRoot)
    .end();
  root.end();
  const traceId = root.spanContext().traceId;
  await provider.forceFlush();
  await provider.shutdown();
  return traceId;
}

describe("POST /v1/traces with the official OTLP exporters", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  const exporters: Array<[string, () => SpanExporter]> = [
    [
      "OTLP/HTTP JSON",
      () =>
        new HttpExporter({ url: `${t.server.url}/v1/traces`, headers: { "x-api-key": t.apiKey } }),
    ],
    [
      "OTLP/HTTP protobuf",
      () =>
        new ProtoExporter({ url: `${t.server.url}/v1/traces`, headers: { "x-api-key": t.apiKey } }),
    ],
    [
      "OTLP/HTTP protobuf, gzip",
      () =>
        new ProtoExporter({
          url: `${t.server.url}/v1/traces`,
          headers: { "x-api-key": t.apiKey },
          compression: "gzip" as never,
        }),
    ],
  ];

  it.each(exporters)(
    "%s: spans land with kind, model, tokens, cost, session and tags",
    async (label, create) => {
      const traceId = await exportWith(create(), label.replace(/\W+/g, "-"));
      const response = await t.call("GET", `/traces/tr_${traceId}`);
      expect(response.status).toBe(200);
      const trace = await response.json();
      expect(trace).toMatchObject({
        kind: "agent",
        span_count: 3,
        session_id: `session-${label.replace(/\W+/g, "-")}`,
        tags: ["otlp"],
        usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 },
        cost_usd: 0.75,
      });
      const [root] = trace.spans;
      const byName = Object.fromEntries(
        root.children.map((span: { name: string }) => [span.name, span]),
      );
      expect(byName["chat gpt-4o-mini"]).toMatchObject({
        kind: "llm",
        model: "gpt-4o-mini",
        cost_usd: 0.75,
      });
      expect(byName["plain-http-call"]).toMatchObject({
        kind: "chain",
        attributes: { "http.request.method": "GET" },
      });
    },
  );

  it("rejects a wrong key, a wrong content type and a corrupt body, storing nothing", async () => {
    const post = (body: BodyInit, headers: Record<string, string>) =>
      fetch(`${t.server.url}/v1/traces`, {
        method: "POST",
        body,
        headers: { "x-api-key": t.apiKey, ...headers },
      });
    const wrongKey = await fetch(`${t.server.url}/v1/traces`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json", "x-api-key": "not-a-key-1234567890" },
    });
    expect(wrongKey.status).toBe(401);
    const wrongType = await post("hello", { "content-type": "text/plain" });
    expect(wrongType.status).toBe(415);
    expect((await wrongType.json()).error).toBe("unsupported_media_type");
    const corrupt = await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff]), {
      "content-type": "application/x-protobuf",
    });
    expect(corrupt.status).toBe(400);
    expect((await corrupt.json()).error).toBe("invalid_request");
    const badJson = await post("{resourceSpans:", { "content-type": "application/json" });
    expect(badJson.status).toBe(400);
  });
});
