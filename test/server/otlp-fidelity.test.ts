import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otlpMessageType } from "../../src/server/ingest/otlp/decode-protobuf.js";
import {
  exportTraceServiceRequestName,
  exportTraceServiceResponseName,
} from "../../src/server/ingest/otlp/otlp-proto-descriptor.js";
import { startTestServer, type TestServer } from "./helpers.js";

// What an OTLP exporter sends, in OTLP/JSON: spans of one resource and one scope.
const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const kv = (key: string, value: object) => ({ key, value });
const text = (key: string, value: string) => kv(key, { stringValue: value });

interface SpanInput {
  traceId: string;
  spanId?: string;
  name: string;
  kind?: number | string;
  attributes?: object[];
  links?: object[];
}

function span({ traceId, spanId = hex(8), name, kind, attributes = [], links }: SpanInput) {
  return {
    traceId,
    spanId,
    name,
    ...(kind === undefined ? {} : { kind }),
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000000250000000",
    attributes,
    ...(links === undefined ? {} : { links }),
  };
}

function request(spans: object[], resource: object[] = [text("service.name", "checkout")]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [{ scope: { name: "my-instrumentation", version: "2.3.1" }, spans }],
      },
    ],
  };
}

describe("POST /v1/traces keeps what OTLP says", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  const postJson = (body: object, headers: Record<string, string> = {}) =>
    fetch(`${t.server.url}/v1/traces`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", ...headers },
    });
  const spansOf = async (traceId: string) => {
    const response = await t.call("GET", `/traces/tr_${traceId}`);
    expect(response.status).toBe(200);
    const flat: Array<Record<string, unknown> & { name: string; children: unknown[] }> = [];
    const walk = (nodes: typeof flat) => {
      for (const node of nodes) {
        flat.push(node);
        walk(node.children as typeof flat);
      }
    };
    walk((await response.json()).spans);
    return Object.fromEntries(flat.map((node) => [node.name, node]));
  };

  it("stores span kind, scope, links and resource attributes, and returns them", async () => {
    const traceId = hex(16);
    const linkedTrace = hex(16);
    const linkedSpan = hex(8);
    const response = await postJson(
      request(
        [
          span({ traceId, name: "GET /cart", kind: 2 }),
          span({ traceId, name: "call payments", kind: "SPAN_KIND_CLIENT" }),
          span({
            traceId,
            name: "consume order",
            kind: 5,
            links: [
              {
                traceId: linkedTrace,
                spanId: linkedSpan,
                attributes: [text("messaging.message.id", "m-1")],
              },
            ],
          }),
          span({ traceId, name: "unspecified", kind: 0 }),
        ],
        [
          text("service.name", "checkout"),
          text("service.version", "4.1.0"),
          text("deployment.environment.name", "staging"),
          kv("host.cpu.count", { intValue: "8" }),
        ],
      ),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    const spans = await spansOf(traceId);
    expect(spans["GET /cart"]).toMatchObject({
      span_kind: "server",
      scope: { name: "my-instrumentation", version: "2.3.1" },
      resource: {
        service_name: "checkout",
        attributes: {
          "service.name": "checkout",
          "service.version": "4.1.0",
          "deployment.environment.name": "staging",
          "host.cpu.count": 8,
        },
      },
    });
    expect(spans["call payments"]?.span_kind).toBe("client");
    expect(spans["consume order"]).toMatchObject({
      span_kind: "consumer",
      links: [
        {
          trace_id: `tr_${linkedTrace}`,
          span_id: linkedSpan,
          attributes: { "messaging.message.id": "m-1" },
        },
      ],
    });
    expect(spans.unspecified).not.toHaveProperty("span_kind");
  });

  it("refuses an unknown span kind with 400 naming the span, storing nothing", async () => {
    const traceId = hex(16);
    const response = await postJson(
      request([span({ traceId, name: "ok" }), span({ traceId, name: "bad", kind: 9 })]),
    );
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe("invalid_request");
    expect(body.message).toContain("span 1 of scope 0 of resource 0: kind");
    expect((await t.call("GET", `/traces/tr_${traceId}`)).status).toBe(404);
  });

  it("keeps the positions of empty array items", async () => {
    const traceId = hex(16);
    const array = (values: object[]) => ({ arrayValue: { values } });
    await postJson(
      request([
        span({
          traceId,
          name: "arrays",
          attributes: [
            kv("strings", array([{ stringValue: "a" }, {}, { stringValue: "b" }])),
            kv("numbers", array([{}, { intValue: "2" }, { doubleValue: 1.5 }])),
            kv("flags", array([{ boolValue: true }, {}])),
          ],
        }),
      ]),
    );
    const { arrays } = await spansOf(traceId);
    expect(arrays?.attributes).toMatchObject({
      strings: ["a", null, "b"],
      numbers: [null, 2, 1.5],
      flags: [true, null],
    });
  });

  it("caps a huge attribute at 32 KiB with a marker and records its size", async () => {
    const traceId = hex(16);
    const huge = "é".repeat(1_000_000); // 2,000,000 bytes in UTF-8
    const prompt = "p".repeat(3 * 1024 * 1024);
    await postJson(
      request([
        span({
          traceId,
          name: "big",
          attributes: [
            text("document", huge),
            text("small", "kept as it is"),
            kv("many", {
              arrayValue: { values: Array(10_000).fill({ stringValue: "0123456789" }) },
            }),
            text("input.value", prompt),
          ],
        }),
      ]),
    );
    const { big } = await spansOf(traceId);
    const attributes = big?.attributes as Record<string, unknown>;
    const document = attributes.document as string;
    expect(document.endsWith("…[truncated by Cairn: 2000000 bytes]")).toBe(true);
    expect(Buffer.byteLength(document)).toBeLessThanOrEqual(32 * 1024);
    expect(document.startsWith("éé")).toBe(true);
    expect(document).not.toContain("\uFFFD");
    expect(attributes["cairn.truncated.document"]).toBe(2_000_000);
    expect(attributes.small).toBe("kept as it is");
    expect(attributes["cairn.truncated.small"]).toBeUndefined();
    const many = attributes.many as string[];
    expect(many.length).toBeLessThan(10_000);
    expect(many.join("").length).toBeLessThanOrEqual(32 * 1024);
    expect(attributes["cairn.truncated.many"]).toBe(100_000);
    // Input and output keep up to 1 MiB, far more than an attribute.
    const input = big?.input as string;
    expect(Buffer.byteLength(input)).toBeLessThanOrEqual(1024 * 1024);
    expect(input.length).toBeGreaterThan(1_000_000);
    expect(input.endsWith(`…[truncated by Cairn: ${3 * 1024 * 1024} bytes]`)).toBe(true);
    expect(attributes["cairn.truncated.input"]).toBe(3 * 1024 * 1024);
  });

  it("stores a batch with one 12 MB span whole, the big span capped (was 413)", async () => {
    const traceId = hex(16);
    const response = await postJson(
      request([
        span({ traceId, name: "neighbour 1" }),
        span({ traceId, name: "screenshot", attributes: [text("image.base64", "A".repeat(12e6))] }),
        span({ traceId, name: "neighbour 2" }),
      ]),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    const spans = await spansOf(traceId);
    expect(Object.keys(spans).sort()).toEqual(["neighbour 1", "neighbour 2", "screenshot"]);
    expect(spans.screenshot?.attributes).toMatchObject({
      "cairn.truncated.image.base64": 12_000_000,
    });
  });

  it("refuses a span over 4 MiB once capped and stores its neighbours (JSON partial success)", async () => {
    const traceId = hex(16);
    const giant = hex(8);
    // 200 attributes of 40 kB: each is capped at 32 KiB, and 200 × 32 KiB is still 6.25 MiB.
    const attributes = Array.from({ length: 200 }, (_, index) =>
      text(`blob.${index}`, "x".repeat(40_000)),
    );
    const response = await postJson(
      request([
        span({ traceId, name: "small 1" }),
        span({ traceId, spanId: giant, name: "giant", attributes }),
        span({ traceId, name: "small 2" }),
      ]),
    );
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.partialSuccess.rejectedSpans).toBe("1");
    expect(body.partialSuccess.errorMessage).toContain(`span ${giant} of trace tr_${traceId}`);
    expect(body.partialSuccess.errorMessage).toContain("4 MiB");
    const spans = await spansOf(traceId);
    expect(Object.keys(spans).sort()).toEqual(["small 1", "small 2"]);
  });

  it("answers a protobuf request's partial success in protobuf", async () => {
    const traceId = hex(16);
    const giant = hex(8);
    const attributes = Array.from({ length: 200 }, (_, index) =>
      text(`blob.${index}`, "y".repeat(40_000)),
    );
    const decoded = request([
      span({ traceId, name: "small" }),
      span({ traceId, spanId: giant, name: "giant", attributes }),
    ]);
    // OTLP/JSON ids are hex; protobuf's are bytes.
    for (const each of decoded.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) {
      const record = each as unknown as Record<string, unknown>;
      record.traceId = Buffer.from(record.traceId as string, "hex");
      record.spanId = Buffer.from(record.spanId as string, "hex");
    }
    const requestType = otlpMessageType(exportTraceServiceRequestName);
    const body = requestType.encode(requestType.fromObject(decoded)).finish();
    const response = await fetch(`${t.server.url}/v1/traces`, {
      method: "POST",
      body: gzipSync(body),
      headers: {
        "x-api-key": t.apiKey,
        "content-type": "application/x-protobuf",
        "content-encoding": "gzip",
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-protobuf");
    const responseType = otlpMessageType(exportTraceServiceResponseName);
    const answer = responseType.toObject(
      responseType.decode(new Uint8Array(await response.arrayBuffer())),
      { longs: String },
    );
    expect(answer.partialSuccess.rejectedSpans).toBe("1");
    expect(answer.partialSuccess.errorMessage).toContain(giant);
    expect(Object.keys(await spansOf(traceId))).toEqual(["small"]);
  });
});

describe("the OTLP body limit", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ bodyLimitBytes: 1024 * 1024, otlpBodyLimitBytes: 4 * 1024 * 1024 });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("takes OTLP bodies over the API's limit, up to its own, and refuses past it with 413", async () => {
    const post = (size: number) =>
      fetch(`${t.server.url}/v1/traces`, {
        method: "POST",
        body: JSON.stringify(
          request([
            span({ traceId: hex(16), name: "s", attributes: [text("blob", "z".repeat(size))] }),
          ]),
        ),
        headers: { "x-api-key": t.apiKey, "content-type": "application/json" },
      });
    expect((await post(2 * 1024 * 1024)).status).toBe(200);
    const tooLarge = await post(5 * 1024 * 1024);
    expect(tooLarge.status).toBe(413);
    expect((await tooLarge.json()).error).toBe("payload_too_large");
    // Cairn's own endpoints keep the general limit.
    const ownApi = await t.call("POST", "/traces", { blob: "z".repeat(2 * 1024 * 1024) });
    expect(ownApi.status).toBe(413);
  });
});
