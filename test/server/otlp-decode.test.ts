import { gzipSync } from "node:zlib";
import { context, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { configure, observe, shutdown } from "cairn-ai";
import {
  CairnError,
  type ExportedSpan,
  exportBatchSchema,
  exportedSpanSchema,
} from "cairn-ai/server";
import { describe, expect, it } from "vitest";
import {
  decodeOtlpTraceRequest,
  type OtlpDecodeOptions,
} from "../../src/server/ingest/otlp/index.js";
import { toExportedSpan } from "../../src/tracing/export/to-exported-span.js";
import { PriceTable } from "../../src/tracing/prices.js";

const protobufType = "application/x-protobuf";
const jsonType = "application/json";
const options: OtlpDecodeOptions = { maxDecodedBytes: 4 * 1024 * 1024, prices: new PriceTable() };

/** Real spans from the OpenTelemetry SDK, as an app instrumented with it produces them. */
async function recordSpans(build: (tracer: Tracer) => void): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": "otel-app",
      "telemetry.sdk.name": "opentelemetry",
      "telemetry.sdk.version": "3.1.0",
    }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  build(provider.getTracer("test-scope", "1.0.0"));
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

function serialize(spans: ReadableSpan[], as: "json" | "protobuf"): Uint8Array {
  const serializer = as === "json" ? JsonTraceSerializer : ProtobufTraceSerializer;
  const body = serializer.serializeRequest(spans);
  if (body === undefined) throw new Error("the serializer returned nothing");
  return body;
}

function decode(
  body: Uint8Array,
  contentType: string | undefined,
  contentEncoding?: string,
  decodeOptions: OtlpDecodeOptions = options,
) {
  return decodeOtlpTraceRequest(body, { contentType, contentEncoding }, decodeOptions);
}

/** Decodes and checks every batch and span against the export format's schemas. */
function decodeSpans(body: Uint8Array, contentType: string, contentEncoding?: string) {
  const { batches, spanCount } = decode(body, contentType, contentEncoding);
  for (const batch of batches) exportBatchSchema.parse(batch);
  const spans = batches.flatMap((batch) => batch.spans);
  for (const span of spans) exportedSpanSchema.parse(span);
  expect(spans).toHaveLength(spanCount);
  return spans;
}

function byName(spans: readonly ExportedSpan[], name: string): ExportedSpan {
  const span = spans.find((each) => each.name === name);
  if (span === undefined) throw new Error(`no span named ${name}`);
  return span;
}

function recorded(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((each) => each.name === name);
  if (span === undefined) throw new Error(`no recorded span named ${name}`);
  return span;
}

function expectCairnError(run: () => unknown, code: string, message: RegExp): void {
  try {
    run();
  } catch (error) {
    expect(CairnError.isInstance(error)).toBe(true);
    expect((error as CairnError).code).toBe(code);
    expect((error as CairnError).message).toMatch(message);
    return;
  }
  throw new Error("expected a CairnError, but nothing was thrown");
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

// A small agent run: an agent span with an OpenInference LLM call (which fails once, with an
// exception event) and a plain HTTP span with no AI attributes.
async function agentRun(): Promise<ReadableSpan[]> {
  return recordSpans((tracer) => {
    const agent = tracer.startSpan("agent", {
      attributes: { "openinference.span.kind": "AGENT", "session.id": "ses_1" },
    });
    const inAgent = trace.setSpan(context.active(), agent);
    const llm = tracer.startSpan(
      "chat gpt-4o-mini",
      {
        attributes: {
          "openinference.span.kind": "LLM",
          "llm.model_name": "gpt-4o-mini",
          "llm.provider": "openai",
          "llm.token_count.prompt": 1200,
          "llm.token_count.completion": 300,
          "llm.token_count.total": 1500,
          "input.value": "What is Cairn?",
          "output.value": "An observability tool.",
          "session.id": "ses_1",
          "tag.tags": ["prod", "team=search"],
          metadata: JSON.stringify({ user: "u1", attempt: 2 }),
          "llm.temperature": 0.2,
        },
      },
      inAgent,
    );
    llm.addEvent("first-token", { "gen_ai.latency_ms": 85, cached: false });
    llm.end();
    const http = tracer.startSpan(
      "GET /search",
      { attributes: { "http.request.method": "GET", "http.response.status_code": 502 } },
      inAgent,
    );
    http.recordException(new Error("upstream failed"));
    http.setStatus({ code: SpanStatusCode.ERROR, message: "upstream failed" });
    http.end();
    agent.end();
  });
}

describe("decodeOtlpTraceRequest", () => {
  it("decodes protobuf and JSON bodies of the same spans to the same records", async () => {
    const spans = await agentRun();
    const fromProtobuf = decodeSpans(serialize(spans, "protobuf"), protobufType);
    const fromJson = decodeSpans(serialize(spans, "json"), "application/json; charset=utf-8");
    expect(fromProtobuf).toHaveLength(3);
    expect(fromJson).toEqual(fromProtobuf);
    const { batches } = decode(serialize(spans, "protobuf"), protobufType);
    expect(batches.map((batch) => batch.resource)).toEqual([
      {
        service_name: "otel-app",
        sdk_name: "opentelemetry",
        sdk_version: "3.1.0",
        attributes: expect.objectContaining({
          "service.name": "otel-app",
          "telemetry.sdk.name": "opentelemetry",
        }),
      },
    ]);
  });

  it("accepts gzip-compressed bodies of either encoding", async () => {
    const spans = await agentRun();
    const plain = decodeSpans(serialize(spans, "protobuf"), protobufType);
    const protobufGzip = gzipSync(serialize(spans, "protobuf"));
    const jsonGzip = gzipSync(serialize(spans, "json"));
    expect(decodeSpans(protobufGzip, protobufType, "gzip")).toEqual(plain);
    expect(decodeSpans(jsonGzip, jsonType, "GZIP")).toEqual(plain);
  });

  it("maps OpenInference attributes to kind, model, tokens, cost, session, tags and metadata", async () => {
    const spans = decodeSpans(serialize(await agentRun(), "protobuf"), protobufType);
    const llm = byName(spans, "chat gpt-4o-mini");
    expect(llm).toMatchObject({
      kind: "llm",
      model: "gpt-4o-mini",
      usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
      // gpt-4o-mini: $0.15 in and $0.60 out per million tokens.
      cost_usd: (1200 * 0.15 + 300 * 0.6) / 1e6,
      session_id: "ses_1",
      tags: ["prod", "team=search"],
      metadata: { user: "u1", attempt: 2 },
      input: "What is Cairn?",
      output: "An observability tool.",
      status: "ok",
      status_message: null,
    });
    // Lifted attributes are not repeated; the rest, and the resource's service.name, are kept.
    expect(llm.attributes).toEqual({
      "llm.provider": "openai",
      "llm.temperature": 0.2,
      "service.name": "otel-app",
    });
    expect(byName(spans, "agent")).toMatchObject({ kind: "agent", session_id: "ses_1" });
  });

  it("keeps parent ids, so the spans form the trace", async () => {
    const spans = decodeSpans(serialize(await agentRun(), "json"), jsonType);
    const agent = byName(spans, "agent");
    expect(agent.parent_span_id).toBeNull();
    expect(agent.trace_id).toMatch(/^tr_[0-9a-f]{32}$/);
    for (const name of ["chat gpt-4o-mini", "GET /search"]) {
      expect(byName(spans, name)).toMatchObject({
        trace_id: agent.trace_id,
        parent_span_id: agent.span_id,
      });
    }
  });

  it("stores a span without AI attributes as a chain with its attributes, status and events", async () => {
    const spans = await agentRun();
    const http = byName(decodeSpans(serialize(spans, "protobuf"), protobufType), "GET /search");
    expect(http).toMatchObject({
      kind: "chain",
      model: null,
      usage: null,
      cost_usd: null,
      session_id: null,
      tags: [],
      status: "error",
      status_message: "upstream failed",
    });
    expect(http.attributes).toEqual({
      "http.request.method": "GET",
      "http.response.status_code": 502,
      "service.name": "otel-app",
    });
    expect(http.events).toEqual([
      {
        name: "exception",
        time: toExportedSpan(recorded(spans, "GET /search")).events[0]?.time,
        attributes: {
          "exception.type": "Error",
          "exception.message": "upstream failed",
          "exception.stacktrace": expect.stringContaining("upstream failed"),
        },
      },
    ]);
    expect(Date.parse(http.end_time)).toBeGreaterThanOrEqual(Date.parse(http.start_time));
  });

  it("keeps event names, times and attributes", async () => {
    const spans = await agentRun();
    const decoded = byName(decodeSpans(serialize(spans, "json"), jsonType), "chat gpt-4o-mini");
    const original = toExportedSpan(recorded(spans, "chat gpt-4o-mini"));
    expect(decoded.events).toEqual(original.events);
    expect(decoded.events[0]).toMatchObject({
      name: "first-token",
      attributes: { "gen_ai.latency_ms": 85, cached: false },
    });
  });

  it("maps GenAI attributes when there are no OpenInference ones", async () => {
    const spans = await recordSpans((tracer) => {
      const attributes = {
        chat: {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": "gpt-4o",
          "gen_ai.response.model": "gpt-4o-2024-08-06",
          "gen_ai.usage.input_tokens": 1000,
          "gen_ai.usage.output_tokens": 100,
          "gen_ai.conversation.id": "conv-7",
        },
        embed: {
          "gen_ai.operation.name": "embeddings",
          "gen_ai.request.model": "text-embedding-3-small",
          "gen_ai.usage.input_tokens": 5000,
        },
        tool: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search" },
        agent: { "gen_ai.operation.name": "invoke_agent" },
        other: { "gen_ai.operation.name": "something_new" },
      };
      for (const [name, values] of Object.entries(attributes)) {
        tracer.startSpan(name, { attributes: values }).end();
      }
    });
    const decoded = decodeSpans(serialize(spans, "protobuf"), protobufType);
    expect(byName(decoded, "chat")).toMatchObject({
      kind: "llm",
      model: "gpt-4o",
      usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
      cost_usd: (1000 * 2.5 + 100 * 10) / 1e6,
      session_id: "conv-7",
    });
    // The response model differs from the request model, so it stays in the attributes.
    expect(byName(decoded, "chat").attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "service.name": "otel-app",
    });
    expect(byName(decoded, "embed")).toMatchObject({
      kind: "embedding",
      model: "text-embedding-3-small",
      usage: { prompt_tokens: 5000, completion_tokens: 0, total_tokens: 5000 },
      cost_usd: (5000 * 0.02) / 1e6,
    });
    // A tool span is named after its tool, so every tool call is not just "execute_tool".
    expect(byName(decoded, "search").kind).toBe("tool");
    expect(byName(decoded, "agent").kind).toBe("agent");
    expect(byName(decoded, "other").kind).toBe("chain");
  });

  it("marks the cost unavailable for a model call with tokens of an unpriced model", async () => {
    const spans = await recordSpans((tracer) => {
      const tokens = { "llm.token_count.prompt": 10, "llm.token_count.completion": 5 };
      tracer
        .startSpan("local", {
          attributes: {
            ...tokens,
            "openinference.span.kind": "LLM",
            "llm.model_name": "my-model",
          },
        })
        .end();
      // Tokens on a chain are usually its children's, summed: pricing them would count twice.
      tracer
        .startSpan("rollup", { attributes: { ...tokens, "openinference.span.kind": "CHAIN" } })
        .end();
      tracer.startSpan("rerank", { attributes: { "openinference.span.kind": "RERANKER" } }).end();
    });
    const decoded = decodeSpans(serialize(spans, "protobuf"), protobufType);
    expect(byName(decoded, "local")).toMatchObject({ cost_usd: null, model: "my-model" });
    expect(byName(decoded, "local").attributes["cairn.cost.unavailable"]).toBe(
      "unknown_model:my-model",
    );
    expect(byName(decoded, "rollup").cost_usd).toBeNull();
    expect(byName(decoded, "rollup").usage?.total_tokens).toBe(15);
    expect(byName(decoded, "rollup").attributes).not.toHaveProperty("cairn.cost.unavailable");
    expect(byName(decoded, "rerank").kind).toBe("retrieval");
    expect(byName(decoded, "rerank").attributes["openinference.span.kind"]).toBe("RERANKER");
  });

  it("flattens OTLP values Cairn attributes cannot hold, and reads int64 strings and numbers", () => {
    const kv = (key: string, value: object) => ({ key, value });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "py-app" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "5B8EFFF798038103D269B633813FC60C",
                  spanId: "EEE19B7EC3C1B174",
                  parentSpanId: "",
                  name: "rich",
                  kind: 1,
                  startTimeUnixNano: 1_700_000_000_123_456_800,
                  endTimeUnixNano: "1700000001123456789",
                  attributes: [
                    kv("kv", { kvlistValue: { values: [kv("n", { intValue: "1" })] } }),
                    kv("bytes", { bytesValue: "AQID" }),
                    kv("nested", {
                      arrayValue: { values: [{ arrayValue: { values: [{ intValue: 1 }] } }] },
                    }),
                    kv("ints", { arrayValue: { values: [{ intValue: "2" }, {}] } }),
                    kv("big", { intValue: "9007199254740993" }),
                    kv("nan", { doubleValue: "NaN" }),
                    kv("empty", {}),
                    kv("gen_ai.usage.input_tokens", { intValue: "42" }),
                    kv("gen_ai.usage.output_tokens", { intValue: 7 }),
                  ],
                  status: { code: 2 },
                },
              ],
            },
          ],
        },
      ],
    };
    const [span] = decodeSpans(json(body), jsonType);
    expect(span).toMatchObject({
      trace_id: "tr_5b8efff798038103d269b633813fc60c",
      span_id: "eee19b7ec3c1b174",
      parent_span_id: null,
      start_time: "2023-11-14T22:13:20.123Z",
      end_time: "2023-11-14T22:13:21.123Z",
      duration_ms: 1000,
      status: "error",
      status_message: null,
      usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
      kind: "chain",
    });
    expect(span?.attributes).toEqual({
      kv: '{"n":1}',
      bytes: "AQID",
      nested: "[[1]]",
      ints: [2, null],
      big: "9007199254740993",
      nan: "NaN",
      "service.name": "py-app",
    });
  });

  it("gives a Cairn SDK span sent over OTLP the record Cairn's own exporter gives it", async () => {
    const exporter = new InMemorySpanExporter();
    configure({ exporter, exportMode: "immediate", serviceName: "support-bot" });
    try {
      const draft = observe(
        async (question: string) => ({
          text: `answer to ${question}`,
          model: "gpt-4o-mini",
          usage: { prompt_tokens: 600, completion_tokens: 212, total_tokens: 812 },
        }),
        { kind: "llm", spanName: "draft", tags: { team: "search" } },
      );
      const lookup = observe(
        async () => {
          throw new Error("index offline");
        },
        { kind: "tool", spanName: "lookup" },
      );
      await observe(
        async (question: string) => {
          await lookup().catch(() => undefined);
          return draft(question);
        },
        {
          spanName: "answer",
          sessionId: "ses_abc",
          version: "v3",
          metadata: { plan: "pro" },
          customAttributes: { "app.region": "eu", "app.retries": 2 },
        },
      )("what is cairn?");
      const spans = exporter.getFinishedSpans();
      expect(spans.map((span) => span.name).sort()).toEqual(["answer", "draft", "lookup"]);
      const { batches } = decode(serialize(spans, "protobuf"), protobufType);
      expect(batches.map((batch) => batch.resource)).toMatchObject([
        { service_name: "support-bot", sdk_name: "cairn", sdk_version: expect.any(String) },
      ]);
      const decoded = batches.flatMap((batch) => batch.spans);
      // The differences: the OTLP record carries the resource's service.name as an attribute,
      // where Cairn's JSON export carries it once per batch, and OTLP's span kind and scope,
      // which Cairn's export leaves out (its spans are all internal, from the scope "cairn").
      for (const span of decoded) {
        expect(span.attributes["service.name"]).toBe("support-bot");
        expect(span).toMatchObject({ span_kind: "internal", scope: { name: "cairn" } });
        delete span.attributes["service.name"];
        delete span.span_kind;
        delete span.scope;
      }
      expect(decoded).toEqual(spans.map(toExportedSpan));
      expect(byName(decoded, "draft")).toMatchObject({ kind: "llm", cost_usd: expect.any(Number) });
      expect(byName(decoded, "lookup")).toMatchObject({ kind: "tool", status: "error" });
    } finally {
      await shutdown();
    }
  });

  it("returns no batches for a request without spans", () => {
    const none = { batches: [], spanCount: 0, refused: undefined };
    expect(decode(json({ resourceSpans: [] }), jsonType)).toMatchObject(none);
    expect(decode(new Uint8Array(), protobufType)).toMatchObject(none);
  });
});

describe("decodeOtlpTraceRequest with bad input", () => {
  it("rejects a body that is not protobuf", () => {
    expectCairnError(
      () => decode(new TextEncoder().encode("this is not protobuf"), protobufType),
      "invalid_request",
      /not a valid OTLP protobuf ExportTraceServiceRequest/,
    );
  });

  it("rejects invalid JSON and JSON that is not a request", () => {
    expectCairnError(
      () => decode(new TextEncoder().encode('{"resourceSpans": ['), jsonType),
      "invalid_request",
      /the body is not valid JSON/,
    );
    expectCairnError(() => decode(json([1, 2]), jsonType), "invalid_request", /resourceSpans/);
    expectCairnError(
      () => decode(json({ resourceSpans: [{ scopeSpans: "none" }] }), jsonType),
      "invalid_request",
      /resource 0: scopeSpans must be an array/,
    );
  });

  it("rejects a content type other than protobuf or JSON, and unknown encodings", async () => {
    const body = serialize(await agentRun(), "json");
    expectCairnError(
      () => decode(body, "text/plain"),
      "unsupported_media_type",
      /application\/x-protobuf or application\/json, but the request has content-type "text\/plain"/,
    );
    expectCairnError(() => decode(body, undefined), "unsupported_media_type", /no content-type/);
    expectCairnError(
      () => decode(body, "application/json; charset=utf-16"),
      "unsupported_media_type",
      /charset=utf-16/,
    );
    expectCairnError(
      () => decode(body, jsonType, "br"),
      "unsupported_media_type",
      /content-encoding "br" is not supported/,
    );
    expectCairnError(() => decode(body, jsonType, "gzip"), "invalid_request", /not valid gzip/);
  });

  it("rejects a trace id of the wrong length, naming the span", async () => {
    const [span] = await recordSpans((tracer) => tracer.startSpan("short-id").end());
    const real = span as ReadableSpan;
    // The official serializer writes whatever id the span has.
    const shortId: ReadableSpan = Object.assign(Object.create(real), {
      spanContext: () => ({ ...real.spanContext(), traceId: "abcdef" }),
    });
    expectCairnError(
      () => decode(serialize([real, shortId], "protobuf"), protobufType),
      "invalid_request",
      /^span 1 of scope 0 of resource 0 has a trace id of 3 bytes; expected 16$/,
    );
    expectCairnError(
      () => decode(serialize([shortId], "json"), jsonType),
      "invalid_request",
      /span 0 of scope 0 of resource 0 has a trace id of 3 bytes \(6 hex digits\); expected 16/,
    );
    const base64Id: ReadableSpan = Object.assign(Object.create(real), {
      spanContext: () => ({ ...real.spanContext(), spanId: "7u4bfsPBsXQ=" }),
    });
    expectCairnError(
      () => decode(serialize([base64Id], "json"), jsonType),
      "invalid_request",
      /has a span id that is not hex .*not base64/,
    );
  });

  it("rejects a gzip bomb without inflating it", () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    expect(bomb.byteLength).toBeLessThan(100 * 1024);
    const limit = { ...options, maxDecodedBytes: 1024 * 1024 };
    expectCairnError(
      () => decode(bomb, protobufType, "gzip", limit),
      "payload_too_large",
      /decompresses to more than 1048576 bytes/,
    );
    expectCairnError(
      () => decode(new Uint8Array(1024 * 1024 + 1), protobufType, undefined, limit),
      "payload_too_large",
      /the body is more than 1048576 bytes/,
    );
  });

  it("rejects more than 10,000 spans in one request", () => {
    const span = {
      traceId: "5b8efff798038103d269b633813fc60c",
      spanId: "eee19b7ec3c1b174",
      name: "s",
      startTimeUnixNano: "1700000000000000000",
      endTimeUnixNano: "1700000000000000001",
    };
    const body = (count: number) =>
      json({
        resourceSpans: [{ scopeSpans: [{ spans: Array.from({ length: count }, () => span) }] }],
      });
    expect(decode(body(10_000), jsonType).spanCount).toBe(10_000);
    expectCairnError(
      () => decode(body(10_001), jsonType),
      "payload_too_large",
      /the request has 10001 spans, more than the 10000 allowed in one request/,
    );
  });

  it("rejects spans missing what OTLP requires, and malformed values", () => {
    const span = {
      traceId: "5b8efff798038103d269b633813fc60c",
      spanId: "eee19b7ec3c1b174",
      name: "s",
      startTimeUnixNano: "1700000000000000000",
      endTimeUnixNano: "1700000000000000001",
    };
    const request = (override: object) =>
      json({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, ...override }] }] }] });
    const where = "span 0 of scope 0 of resource 0";
    const cases: Array<[object, string]> = [
      [{ spanId: undefined }, `${where} has no span id`],
      [{ traceId: "0".repeat(32) }, `${where} has an all-zero trace id`],
      [{ startTimeUnixNano: "soon" }, `${where}: startTimeUnixNano must be Unix time`],
      [{ endTimeUnixNano: undefined }, `${where} has no endTimeUnixNano`],
      [
        { attributes: [{ key: "n", value: { intValue: "1.5" } }] },
        `${where}: attributes[0] ("n") has an intValue that is not an integer`,
      ],
      [{ attributes: [{ value: { stringValue: "x" } }] }, `${where}: attributes[0] has no key`],
    ];
    for (const [override, message] of cases) {
      expectCairnError(
        () => decode(request(override), jsonType),
        "invalid_request",
        new RegExp(message.replace(/[()[\]]/g, "\\$&")),
      );
    }
  });
});
