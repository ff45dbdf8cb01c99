import { configure, flush, observe, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startCollector } from "../helpers/collector.js";
import { captureLog } from "../helpers/log.js";

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; arrayValue?: unknown };
}

afterEach(async () => {
  vi.restoreAllMocks();
  await shutdown();
});

describe("the OTLP exporter", () => {
  it("sends OTLP/HTTP JSON to {endpoint}/v1/traces with the API key", async () => {
    const collector = await startCollector();
    try {
      configure({
        endpoint: collector.url,
        apiKey: "otlp-key",
        exporter: "otlp",
        serviceName: "svc",
      });
      await observe(async () => "out", { kind: "llm", model: "gpt-4o", spanName: "chat" })();
      await flush();
      const request = collector.requests.find((each) => each.path === "/v1/traces");
      expect(request?.headers["x-api-key"]).toBe("otlp-key");
      const body = request?.json() as {
        resourceSpans: Array<{
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: Array<{ spans: Array<{ name: string; attributes: OtlpAttribute[] }> }>;
        }>;
      };
      const resource = body.resourceSpans[0];
      const service = resource?.resource.attributes.find((each) => each.key === "service.name");
      expect(service?.value.stringValue).toBe("svc");
      const span = resource?.scopeSpans[0]?.spans[0];
      expect(span?.name).toBe("chat");
      const attributes = Object.fromEntries(
        (span?.attributes ?? []).map((each) => [each.key, each.value.stringValue]),
      );
      expect(attributes).toMatchObject({
        "openinference.span.kind": "LLM",
        "gen_ai.request.model": "gpt-4o",
        "output.value": "out",
      });
    } finally {
      await collector.stop();
    }
  });

  it("needs an endpoint", () => {
    expect(() => configure({ exporter: "otlp" })).toThrow(
      /exporter "otlp" needs an endpoint: pass \{ endpoint \} or set CAIRN_ENDPOINT/,
    );
  });
});

describe("the console exporter", () => {
  it("prints each trace as an indented tree with kinds, durations, tokens and cost", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((text: string) => {
      lines.push(text);
    });
    configure({ exporter: "console", exportMode: "immediate" });
    const search = observe(async () => ["doc"], { kind: "retrieval", spanName: "search" });
    const draft = observe(
      async () => ({
        model: "gpt-4o-mini",
        usage: { prompt_tokens: 600, completion_tokens: 212, total_tokens: 812 },
      }),
      { kind: "llm", spanName: "draft" },
    );
    await observe(
      async () => {
        await search();
        await draft();
      },
      { kind: "agent", spanName: "support" },
    )();
    await flush();
    expect(lines).toHaveLength(1);
    const tree = (lines[0] ?? "").split("\n");
    expect(tree[0]).toMatch(/^tr_[0-9a-f]{32} · [\d.]+ m?s · 812 tokens · \$0\.000217$/);
    expect(tree[1]).toMatch(/^└─ agent support {2}[\d.]+ m?s$/);
    expect(tree[2]).toMatch(/^ {3}├─ retrieval search {2}[\d.]+ m?s$/);
    expect(tree[3]).toMatch(
      /^ {3}└─ llm draft {2}[\d.]+ m?s {2}gpt-4o-mini {2}tokens 600\+212=812 {2}\$0\.000217$/,
    );
  });
});

describe("configure()", () => {
  it("names the setting that is wrong", () => {
    expect(() => configure({ sampleRate: 2 })).toThrow(/setting "sampleRate"/);
    expect(() => configure({ endpoint: "localhost:7070" })).toThrow(
      /setting "endpoint": must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => configure({ exporter: "zipkin" as never })).toThrow(
      /setting "exporter": must be "cairn", "otlp", "console" or an OpenTelemetry SpanExporter/,
    );
    expect(() => configure({ colour: "blue" } as never)).toThrow(
      /setting "colour" is not supported/,
    );
    expect(() => configure({ batch: { maxBatchSize: 10, maxQueueSize: 5 } })).toThrow(
      /"batch.maxBatchSize" \(10\) cannot exceed "batch.maxQueueSize" \(5\)/,
    );
  });

  it("samples whole traces by sampleRate", () => {
    const exporter = memoryExporter();
    configure({ exporter, sampleRate: 0.5 });
    const child = observe(() => 1, { spanName: "child" });
    const grandchild = observe(() => child(), { spanName: "middle" });
    const root = observe(() => grandchild(), { spanName: "root" });
    for (let index = 0; index < 400; index++) root();
    const byTrace = new Map<string, string[]>();
    for (const span of exporter.spans()) {
      byTrace.set(span.trace_id, [...(byTrace.get(span.trace_id) ?? []), span.name]);
    }
    // About half the traces are kept, each one whole.
    expect(byTrace.size).toBeGreaterThan(120);
    expect(byTrace.size).toBeLessThan(280);
    for (const names of byTrace.values()) expect(names).toEqual(["child", "middle", "root"]);
  });

  it("turns tracing off, with a warning, when there is nowhere to send spans", async () => {
    const log = captureLog();
    try {
      configure({});
      expect(log.messages).toEqual([
        expect.objectContaining({
          level: "warn",
          message: expect.stringContaining("tracing is off"),
        }),
      ]);
      expect(observe(() => "still works")()).toBe("still works");
    } finally {
      log.restore();
    }
  });
});

describe("memoryExporter()", () => {
  it("returns finished spans in the export format and forgets them on reset()", () => {
    const exporter = memoryExporter();
    configure({ exporter });
    observe(() => 1, { spanName: "one" })();
    expect(exporter.spans().map((span) => span.name)).toEqual(["one"]);
    exporter.reset();
    expect(exporter.spans()).toEqual([]);
  });
});
