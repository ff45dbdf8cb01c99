import { ConfigurationError, configure, currentSpan, observe, shutdown } from "cairn-ai";
import { describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

describe("observe() on plain functions", () => {
  const memory = useMemoryExporter();

  it("keeps the name, arity, this and return value of a sync function", () => {
    const counter = {
      base: 40,
      add(this: { base: number }, amount: number, _unused?: string) {
        return this.base + amount;
      },
    };
    counter.add = observe(counter.add);
    expect(counter.add.name).toBe("add");
    expect(counter.add.length).toBe(2);
    expect(counter.add(2)).toBe(42);
    const [span] = memory.exporter.spans();
    expect(span).toMatchObject({
      name: "add",
      kind: "chain",
      input: "2",
      output: "42",
      status: "ok",
    });
    expect(span?.trace_id).toMatch(/^tr_[0-9a-f]{32}$/);
    expect(span?.parent_span_id).toBeNull();
  });

  it("records an async function when its promise settles", async () => {
    const answer = observe(async function answer(question: string) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { text: `re: ${question}` };
    });
    const pending = answer("why?");
    expect(memory.exporter.spans()).toHaveLength(0);
    await expect(pending).resolves.toEqual({ text: "re: why?" });
    const [span] = memory.exporter.spans();
    expect(span?.input).toBe("why?");
    expect(JSON.parse(span?.output ?? "")).toEqual({ text: "re: why?" });
    expect(span?.duration_ms).toBeGreaterThanOrEqual(4);
  });

  it("records several arguments as a list", () => {
    observe((a: number, b: string, c: boolean) => [a, b, c])(1, "two", true);
    expect(JSON.parse(memory.exporter.spans()[0]?.input ?? "")).toEqual([1, "two", true]);
  });

  it("rethrows the very error of a sync function and records it", () => {
    let failure: unknown;
    const failing = observe(function validate() {
      failure = new TypeError("bad input");
      throw failure;
    });
    let caught: unknown;
    try {
      failing();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBe(failure);
    const [span] = memory.exporter.spans();
    expect(span?.status).toBe("error");
    expect(span?.status_message).toBe("bad input");
    const exception = span?.events.find((event) => event.name === "exception");
    expect(exception?.attributes).toMatchObject({
      "exception.type": "TypeError",
      "exception.message": "bad input",
    });
    expect(String(exception?.attributes["exception.stacktrace"])).toContain("validate");
  });

  it("rethrows the rejection of an async function unchanged", async () => {
    const failure = new Error("upstream 503");
    const call = observe(async () => {
      throw failure;
    });
    await expect(call()).rejects.toBe(failure);
    expect(memory.exporter.spans()[0]?.status).toBe("error");
  });

  it("leaves out the exception event when captureExceptions is false", () => {
    const quiet = observe(
      () => {
        throw new Error("expected miss");
      },
      { captureExceptions: false },
    );
    expect(() => quiet()).toThrow("expected miss");
    const [span] = memory.exporter.spans();
    expect(span?.status).toBe("error");
    expect(span?.events).toEqual([]);
  });

  it("uses spanName, model, metadata, version, expectedOutput and customAttributes", () => {
    observe(() => "Paris", {
      kind: "llm",
      spanName: "capital-lookup",
      model: "gpt-4o-mini",
      metadata: { prompt: "v3" },
      version: "1.4.0",
      expectedOutput: "Paris",
      customAttributes: { "app.region": "eu" },
    })();
    expect(memory.exporter.spans()[0]).toMatchObject({
      name: "capital-lookup",
      kind: "llm",
      model: "gpt-4o-mini",
      metadata: { prompt: "v3" },
      version: "1.4.0",
      expected_output: "Paris",
      attributes: { "app.region": "eu" },
    });
  });

  it("lets the function set its own output", () => {
    observe(() => {
      currentSpan().setOutput({ summary: "short" });
      return "a very long raw value";
    })();
    expect(memory.exporter.spans()[0]?.output).toBe('{"summary":"short"}');
  });

  it("rejects a non-function with a clear error", () => {
    expect(() => observe("nope" as never)).toThrow(ConfigurationError);
    expect(() => observe("nope" as never)).toThrow("expected a function to wrap, got string");
  });
});

describe("observe() with tracing off", () => {
  it("calls straight through, never throws, and currentSpan() records nothing", async () => {
    await shutdown();
    const spanIds: string[] = [];
    const traced = observe(async (value: number) => {
      const span = currentSpan();
      span.setTokenUsage({ prompt: 1, completion: 1 }).setAttribute("a", 1).addEvent("e");
      spanIds.push(span.spanId);
      expect(span.isRecording).toBe(false);
      return value * 2;
    });
    await expect(traced(21)).resolves.toBe(42);
    expect(spanIds).toEqual([""]);
  });

  it("starts tracing once configure() is called, for functions wrapped before", async () => {
    const traced = observe(() => "late");
    const { memoryExporter } = await import("cairn-ai/testing");
    const exporter = memoryExporter();
    traced();
    configure({ exporter });
    traced();
    expect(exporter.spans()).toHaveLength(1);
    await shutdown();
  });
});
