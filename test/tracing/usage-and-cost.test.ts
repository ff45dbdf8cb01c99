import { configure, currentSpan, observe, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterEach, describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

describe("currentSpan()", () => {
  const memory = useMemoryExporter();

  it("exposes the trace id as tr_ + 32 hex and the span id", () => {
    let ids = { traceId: "", spanId: "" };
    observe(() => {
      const { traceId, spanId } = currentSpan();
      ids = { traceId, spanId };
    })();
    expect(ids.traceId).toMatch(/^tr_[0-9a-f]{32}$/);
    expect(ids.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(memory.exporter.spans()[0]).toMatchObject({
      trace_id: ids.traceId,
      span_id: ids.spanId,
    });
  });

  it("sets attributes and events", () => {
    observe(() => {
      currentSpan()
        .setAttribute("retrieval.documents", 3)
        .setAttributes({ "app.user": "u1", "app.flags": ["a", "b"], "app.obj": { deep: true } })
        .addEvent("cache-miss", { key: "q1" });
    })();
    const [span] = memory.exporter.spans();
    expect(span?.attributes).toMatchObject({
      "retrieval.documents": 3,
      "app.user": "u1",
      "app.flags": ["a", "b"],
      "app.obj": '{"deep":true}',
    });
    expect(span?.events).toEqual([
      { name: "cache-miss", time: expect.any(String), attributes: { key: "q1" } },
    ]);
  });

  it("takes token usage in either shape and fills a missing total", () => {
    const call = observe(
      (shape: "long" | "short") => {
        if (shape === "long") {
          currentSpan().setTokenUsage({
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
          });
        } else {
          currentSpan().setTokenUsage({ prompt: 100, completion: 20 });
        }
      },
      { kind: "llm", model: "gpt-4o-mini" },
    );
    call("long");
    call("short");
    const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
    expect(memory.exporter.spans().map((span) => span.usage)).toEqual([usage, usage]);
  });

  it("prices tokens from the model table: gpt-4o-mini at $0.15 / $0.60 per million", () => {
    observe(
      () => {
        currentSpan().setTokenUsage({ prompt: 1_000_000, completion: 1_000_000 });
      },
      { kind: "llm", model: "gpt-4o-mini-2024-07-18" },
    )();
    expect(memory.exporter.spans()[0]?.cost_usd).toBeCloseTo(0.75, 10);
  });

  it("says the cost is unknown for an unknown model instead of reporting $0", () => {
    observe(
      () => {
        currentSpan().setTokenUsage({ prompt: 10, completion: 5 });
      },
      { kind: "llm", model: "in-house-llm-7b" },
    )();
    const [span] = memory.exporter.spans();
    expect(span?.cost_usd).toBeNull();
    expect(span?.attributes["cairn.cost.unavailable"]).toBe("unknown_model:in-house-llm-7b");
  });

  it("flags invalid usage on the span instead of throwing into the call", () => {
    const call = observe(
      () => {
        currentSpan().setTokenUsage({ prompt: 10, completion: 5, total: 3 });
        return "still runs";
      },
      { kind: "llm", model: "gpt-4o" },
    );
    expect(call()).toBe("still runs");
    const [span] = memory.exporter.spans();
    expect(span?.usage).toBeNull();
    expect(span?.attributes["cairn.usage.invalid"]).toContain("total tokens (3) is below");
  });

  it("picks usage and model out of a returned chat completion", async () => {
    const create = observe(
      async () => ({
        object: "chat.completion",
        model: "gpt-4.1-mini",
        choices: [{ message: { role: "assistant", content: "hi" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
      }),
      { kind: "llm" },
    );
    await create();
    expect(memory.exporter.spans()[0]).toMatchObject({
      model: "gpt-4.1-mini",
      usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
      cost_usd: 0.0012,
    });
  });
});

describe("price overrides", () => {
  afterEach(async () => {
    await shutdown();
  });

  it("uses prices from configure() over the built-in table", () => {
    const exporter = memoryExporter();
    configure({
      exporter,
      prices: { "in-house-llm-7b": { input: 1, output: 2 }, "gpt-4o": { input: 0, output: 0 } },
    });
    const call = observe(
      (model: string) => {
        currentSpan().setModel(model).setTokenUsage({ prompt: 1_000_000, completion: 500_000 });
      },
      { kind: "llm" },
    );
    call("in-house-llm-7b");
    call("gpt-4o");
    expect(exporter.spans().map((span) => span.cost_usd)).toEqual([2, 0]);
  });

  it("rejects a malformed price table, naming the field", () => {
    expect(() => configure({ prices: { m: { input: -1, output: 1 } } })).toThrow(
      /setting "prices.m.input"/,
    );
  });
});
