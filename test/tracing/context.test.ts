import { EventEmitter } from "node:events";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { currentSpan, type ExportedSpan, observe } from "cairn-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function byName(spans: ExportedSpan[], name: string): ExportedSpan {
  const found = spans.find((span) => span.name === name);
  if (found === undefined) throw new Error(`no span named ${name}`);
  return found;
}

describe("span nesting follows the async context", () => {
  const memory = useMemoryExporter();

  it("nests across await, Promise.all, timers and event emitters", async () => {
    const leaf = observe(async function leaf(label: string) {
      await sleep(1);
      return label;
    });
    const emitter = new EventEmitter();
    const root = observe(async function root() {
      await leaf("after-await");
      await Promise.all([leaf("all-1"), leaf("all-2")]);
      await new Promise<void>((resolve) => {
        setTimeout(() => void leaf("in-timer").then(() => resolve()), 1);
      });
      const fromEvent = new Promise<void>((resolve) => {
        emitter.once("go", () => void leaf("in-listener").then(() => resolve()));
      });
      // Emitted later, from work the call started (a socket, a timer).
      setImmediate(() => emitter.emit("go"));
      await fromEvent;
    });
    await root();
    const spans = memory.exporter.spans();
    const rootSpan = byName(spans, "root");
    const leaves = spans.filter((span) => span.name === "leaf");
    expect(leaves.map((span) => span.input).sort()).toEqual(
      ["after-await", "all-1", "all-2", "in-listener", "in-timer"].sort(),
    );
    for (const span of leaves) {
      expect(span.parent_span_id).toBe(rootSpan.span_id);
      expect(span.trace_id).toBe(rootSpan.trace_id);
    }
  });

  it("keeps 1,000 interleaved concurrent traces apart", async () => {
    const step = observe(async function step(traceIndex: number, stepIndex: number) {
      await sleep(Math.random() * 3);
      return `${traceIndex}:${stepIndex}:${currentSpan().traceId}`;
    });
    const request = observe(async function request(traceIndex: number) {
      const first = await step(traceIndex, 0);
      const [second, third] = await Promise.all([step(traceIndex, 1), step(traceIndex, 2)]);
      return [first, second, third, currentSpan().traceId];
    });
    const results = await Promise.all(Array.from({ length: 1000 }, (_, index) => request(index)));
    // Inside each call, every step saw its own request's trace.
    for (const result of results) {
      const traceId = result[3] as string;
      for (const stepResult of result.slice(0, 3)) expect(stepResult.endsWith(traceId)).toBe(true);
    }
    const spans = memory.exporter.spans();
    const roots = spans.filter((span) => span.name === "request");
    expect(roots).toHaveLength(1000);
    expect(new Set(roots.map((span) => span.trace_id)).size).toBe(1000);
    const rootByTrace = new Map(roots.map((span) => [span.trace_id, span]));
    const steps = spans.filter((span) => span.name === "step");
    expect(steps).toHaveLength(3000);
    for (const span of steps) {
      const parent = rootByTrace.get(span.trace_id);
      expect(span.parent_span_id).toBe(parent?.span_id);
      // The step's first argument is the index of the request that called it.
      expect(JSON.parse(span.input ?? "")[0]).toBe(JSON.parse(parent?.input ?? ""));
    }
  });
});

describe("next to the host app's own OpenTelemetry setup", () => {
  const memory = useMemoryExporter();
  const hostExporter = new InMemorySpanExporter();
  const hostProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: hostExporter })],
  });
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(() => {
    // What Sentry, Datadog or the OTel NodeSDK do: a global provider and context manager.
    contextManager.enable();
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(hostProvider);
  });

  afterAll(async () => {
    trace.disable();
    context.disable();
    await hostProvider.shutdown();
  });

  it("neither gives its spans to the host provider nor takes the host's", async () => {
    hostExporter.reset();
    const hostTracer = trace.getTracer("host-app");
    const cairnCall = observe(async function cairnCall() {
      // The host's own instrumentation runs inside Cairn's span and nests under it.
      hostTracer.startActiveSpan("host-http-client", (span) => span.end());
      return "ok";
    });
    await cairnCall();
    expect(memory.exporter.spans().map((span) => span.name)).toEqual(["cairnCall"]);
    expect(hostExporter.getFinishedSpans().map((span) => span.name)).toEqual(["host-http-client"]);
    const hostSpan = hostExporter.getFinishedSpans()[0];
    const cairnSpan = memory.exporter.spans()[0];
    expect(hostSpan?.parentSpanContext?.spanId).toBe(cairnSpan?.span_id);
  });

  it("nests the host's spans made inside a generator body under Cairn's span", async () => {
    hostExporter.reset();
    const hostTracer = trace.getTracer("host-app");
    const pages = observe(async function* pages() {
      await new Promise((resolve) => setTimeout(resolve, 1));
      hostTracer.startActiveSpan("host-db-query", (span) => span.end());
      yield "page";
    });
    for await (const _page of pages()) {
      // drain
    }
    const hostSpan = hostExporter.getFinishedSpans()[0];
    expect(hostSpan?.name).toBe("host-db-query");
    expect(hostSpan?.parentSpanContext?.spanId).toBe(memory.exporter.spans()[0]?.span_id);
  });

  it("joins the trace of an active host span", async () => {
    hostExporter.reset();
    const hostTracer = trace.getTracer("host-app");
    const inner = observe(
      async function innerTool() {
        return "x";
      },
      { kind: "tool" },
    );
    await hostTracer.startActiveSpan("host-request", async (span) => {
      await inner();
      span.end();
    });
    const hostSpan = hostExporter.getFinishedSpans()[0];
    const cairnSpan = memory.exporter.spans()[0];
    expect(cairnSpan?.trace_id).toBe(`tr_${hostSpan?.spanContext().traceId}`);
    expect(cairnSpan?.parent_span_id).toBe(hostSpan?.spanContext().spanId);
    expect(cairnSpan?.attributes["cairn.root"]).toBe(true);
  });
});
