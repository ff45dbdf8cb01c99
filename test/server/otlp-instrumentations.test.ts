import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordedDocuments, recordedText } from "../../src/tracing/scoring/recorded-text.js";
import {
  type InstrumentationName,
  recordInstrumentation,
} from "../helpers/instrumentations/index.js";
import { texts } from "../helpers/instrumentations/scenarios.js";
import { startTestServer, type TestServer } from "./helpers.js";

// Spans from the real GenAI instrumentations (test/fixtures/otlp, recorded from the packages;
// some recorded live here too), sent to a real Cairn server over OTLP/HTTP JSON and read back
// through the API, as a user of each instrumentation would see them.

interface Span {
  name: string;
  kind: string;
  model: string | null;
  input: string | null;
  output: string | null;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    cached_tokens?: number;
    reasoning_tokens?: number;
  } | null;
  cost_usd: number | null;
  status: string;
  status_message: string | null;
  session_id: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  attributes: Record<string, unknown>;
  children: Span[];
}

interface Trace {
  trace_id: string;
  name: string;
  kind: string;
  status: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  cost_usd: number;
  spans: Span[];
}

// gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
const price = (prompt: number, completion: number, cached = 0) =>
  ((prompt - cached) * 0.15 + cached * 0.075 + completion * 0.6) / 1e6;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

/** Sends an OTLP/JSON request and returns its traces, read back from the API. */
async function ingest(body: { resourceSpans: unknown[] }): Promise<Trace[]> {
  const response = await t.call("POST", "/v1/traces", body);
  expect(response.status).toBe(200);
  const ids = new Set<string>();
  for (const resource of body.resourceSpans as Array<{
    scopeSpans: Array<{ spans: Array<{ traceId: string }> }>;
  }>) {
    for (const scope of resource.scopeSpans) for (const span of scope.spans) ids.add(span.traceId);
  }
  return Promise.all(
    [...ids].map(async (id) => (await (await t.call("GET", `/traces/tr_${id}`)).json()) as Trace),
  );
}

/** The recorded fixture, or a recording made now with the package installed. */
async function recording(name: InstrumentationName, source: "fixture" | "live") {
  return source === "fixture" ? fixture(name) : (await recordInstrumentation(name)).traces;
}

function fixture(name: InstrumentationName): { resourceSpans: unknown[] } {
  const url = new URL(`../fixtures/otlp/${name}.traces.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as { resourceSpans: unknown[] };
}

function spansOf(trace: Trace): Span[] {
  const all: Span[] = [];
  const walk = (span: Span) => {
    all.push(span);
    span.children.forEach(walk);
  };
  trace.spans.forEach(walk);
  return all;
}

/** The trace whose spans hold `text` in their input (each scenario asks its own question). */
function traceAsking(traces: Trace[], text: string): Trace {
  const found = traces.find((trace) => spansOf(trace).some((span) => span.input?.includes(text)));
  if (found === undefined) throw new Error(`no trace asks ${JSON.stringify(text)}`);
  return found;
}

function only(trace: Trace, kind: string): Span[] {
  return spansOf(trace).filter((span) => span.kind === kind);
}

function messages(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

const chatInput = [
  { role: "system", content: texts.system },
  { role: "user", content: texts.question },
];

describe.each(["fixture", "live"] as const)(
  "the AI SDK with @ai-sdk/otel (GenAI), %s",
  (source) => {
    let traces: Trace[];
    beforeAll(async () => {
      traces = await ingest(await recording("ai-sdk-genai", source));
    }, 60_000);

    it("names the trace after the agent, and counts the model call's tokens once", () => {
      const trace = traceAsking(traces, texts.question);
      expect(trace).toMatchObject({ name: "capital-bot", kind: "agent" });
      expect(trace.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
      expect(trace.cost_usd).toBeCloseTo(price(12, 3), 12);
      const [llm] = only(trace, "llm");
      expect(llm).toMatchObject({ model: texts.model, cost_usd: expect.closeTo(price(12, 3), 12) });
      expect(messages(llm?.input ?? null)).toEqual(chatInput);
      expect(messages(llm?.output ?? null)).toEqual([{ role: "assistant", content: texts.answer }]);
      expect(recordedText(llm?.output)).toBe(texts.answer);
    });

    it("gives a tool round its tool span with arguments and result, and 122 tokens, not 244", () => {
      const trace = traceAsking(traces, texts.weatherQuestion);
      expect(trace.usage.total_tokens).toBe(122);
      expect(only(trace, "tool")).toEqual([
        expect.objectContaining({
          name: "get_weather",
          input: '{"city":"Paris"}',
          output: '{"temperature":21}',
        }),
      ]);
      expect(only(trace, "llm")).toHaveLength(2);
      expect(recordedText(trace.spans[0]?.output)).toBe(texts.weatherAnswer);
    });

    it("reads a streamed answer, embeddings and cached tokens at the cached price", () => {
      expect(recordedText(only(traceAsking(traces, texts.streamQuestion), "llm")[0]?.output)).toBe(
        texts.streamAnswer,
      );
      const cached = only(traceAsking(traces, texts.cachedQuestion), "llm")[0];
      expect(cached?.usage).toMatchObject({
        prompt_tokens: 2048,
        completion_tokens: 50,
        cached_tokens: 1024,
      });
      expect(cached?.cost_usd).toBeCloseTo(price(2048, 50, 1024), 12);
      const embedding = traces
        .flatMap(spansOf)
        .find((span) => span.kind === "embedding" && span.usage !== null);
      expect(embedding).toMatchObject({ model: texts.embeddingModel, usage: { prompt_tokens: 2 } });
    });

    it("marks the refused call and its agent as errors", () => {
      const trace = traceAsking(traces, texts.failingQuestion);
      expect(trace.status).toBe("error");
      expect(only(trace, "llm")[0]?.status).toBe("error");
    });
  },
);

describe.each(["fixture", "live"] as const)(
  "the AI SDK's ai.* attributes (LegacyOpenTelemetry), %s",
  (source) => {
    let traces: Trace[];
    beforeAll(async () => {
      traces = await ingest(await recording("ai-sdk-legacy", source));
    }, 60_000);

    it("reads kinds, the functionId as the name, model, tokens, cost, messages, session, user and metadata", () => {
      const trace = traceAsking(traces, texts.question);
      expect(trace).toMatchObject({ name: "capital-bot", kind: "agent" });
      expect(trace.usage.total_tokens).toBe(15);
      const [llm] = only(trace, "llm");
      expect(llm).toMatchObject({
        name: "ai.generateText.doGenerate",
        model: texts.model,
        output: texts.answer,
        session_id: texts.session,
        metadata: { tenant: texts.tenant },
        cost_usd: expect.closeTo(price(12, 3), 12),
      });
      expect(llm?.attributes["user.id"]).toBe(texts.user);
      expect(messages(llm?.input ?? null)).toEqual(chatInput);
      expect(messages(trace.spans[0]?.input ?? null)).toEqual(chatInput);
    });

    it("names tool spans after their tool, with arguments and result, and counts 122 tokens", () => {
      const trace = traceAsking(traces, texts.weatherQuestion);
      expect(trace.usage.total_tokens).toBe(122);
      expect(only(trace, "tool")).toEqual([
        expect.objectContaining({
          name: "get_weather",
          input: '{"city":"Paris"}',
          output: '{"temperature":21}',
        }),
      ]);
      const [first] = only(trace, "llm");
      expect(messages(first?.output ?? null)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_weather_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          ],
        },
      ]);
    });

    it("reads embedded texts, streamed text, cached and reasoning tokens", () => {
      const embedding = traces.flatMap(spansOf).find((span) => span.kind === "embedding");
      expect(embedding).toMatchObject({ model: texts.embeddingModel, usage: { prompt_tokens: 2 } });
      expect(messages(embedding?.input ?? null)).toEqual(texts.embedded);
      expect(only(traceAsking(traces, texts.streamQuestion), "llm")[0]?.output).toBe(
        texts.streamAnswer,
      );
      const cached = only(traceAsking(traces, texts.cachedQuestion), "llm")[0];
      expect(cached?.usage).toEqual({
        prompt_tokens: 2048,
        completion_tokens: 50,
        total_tokens: 2098,
        cached_tokens: 1024,
        reasoning_tokens: 20,
      });
      expect(cached?.cost_usd).toBeCloseTo(price(2048, 50, 1024), 12);
      expect(traceAsking(traces, texts.failingQuestion).status).toBe("error");
    });
  },
);

describe.each(["fixture", "live"] as const)("OpenInference, %s", (source) => {
  let traces: Trace[];
  beforeAll(async () => {
    traces = await ingest(await recording("openinference", source));
  }, 60_000);

  it("reads the messages rather than the request JSON, and session, user, tags and metadata", () => {
    const [llm] = only(traceAsking(traces, texts.question), "llm");
    expect(messages(llm?.input ?? null)).toEqual(chatInput);
    expect(messages(llm?.output ?? null)).toEqual([{ role: "assistant", content: texts.answer }]);
    expect(llm).toMatchObject({
      model: texts.model,
      session_id: texts.session,
      tags: texts.tags,
      metadata: { tenant: texts.tenant },
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    });
    expect(llm?.attributes["user.id"]).toBe(texts.user);
    // The raw request stays on the span.
    expect(String(llm?.attributes["input.value"])).toContain('"messages"');
  });

  it("keeps tool calls and results in the messages, and prices cached tokens at the cached rate", () => {
    const [second] = only(traceAsking(traces, '"role":"tool"'), "llm");
    expect(messages(second?.input ?? null)).toEqual([
      { role: "user", content: texts.weatherQuestion },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_weather_1", name: "get_weather", arguments: '{"city":"Paris"}' }],
      },
      { role: "tool", content: '{"temperature":21}', tool_call_id: "call_weather_1" },
    ]);
    const [cached] = only(traceAsking(traces, texts.cachedQuestion), "llm");
    expect(cached?.usage).toMatchObject({ cached_tokens: 1024, reasoning_tokens: 20 });
    expect(cached?.cost_usd).toBeCloseTo(price(2048, 50, 1024), 12);
  });

  it("reads retrieval documents, reranked documents, embedded texts and tools", () => {
    const spans = traces.flatMap(spansOf);
    const retrieve = spans.find((span) => span.name === "retrieve");
    expect(recordedDocuments(retrieve?.output)).toEqual([
      "Paris is the capital of France.",
      "France is in Europe.",
    ]);
    const rerank = spans.find((span) => span.name === "rerank");
    expect(rerank).toMatchObject({
      kind: "retrieval",
      model: "rerank-english-v3.0",
      input: texts.question,
    });
    expect(recordedDocuments(rerank?.output)).toEqual(["Paris is the capital of France."]);
    expect(messages(spans.find((span) => span.name === "embed")?.input ?? null)).toEqual(
      texts.embedded,
    );
    expect(spans.find((span) => span.kind === "tool")).toMatchObject({
      name: "get_weather",
      input: '{"city":"Paris"}',
      output: '{"temperature":21}',
    });
  });
});

describe("OpenLLMetry", () => {
  it.each(["openllmetry", "openllmetry-0.22"] as const)(
    "%s: messages with tool calls, model, tokens and cost of each chat",
    async (name) => {
      const traces = await ingest(fixture(name));
      const [llm] = only(traceAsking(traces, texts.question), "llm");
      expect(messages(llm?.input ?? null)).toEqual(chatInput);
      expect(messages(llm?.output ?? null)).toEqual([{ role: "assistant", content: texts.answer }]);
      expect(llm).toMatchObject({ model: texts.model, cost_usd: expect.closeTo(price(12, 3), 12) });
      const [call] = only(traceAsking(traces, texts.weatherQuestion), "llm");
      const [answer] = messages(call?.output ?? null) as Array<{
        tool_calls: Array<{ name: string; arguments: string }>;
      }>;
      expect(answer?.tool_calls[0]).toMatchObject({
        name: "get_weather",
        arguments: '{"city":"Paris"}',
      });
      expect(recordedText(only(traceAsking(traces, texts.streamQuestion), "llm")[0]?.output)).toBe(
        texts.streamAnswer,
      );
    },
  );
});

describe("OpenTelemetry's own OpenAI instrumentation", () => {
  it("reads kind, model, tokens and cost of each call from its spans", async () => {
    const traces = await ingest(fixture("otel-openai"));
    const llms = traces.flatMap(spansOf).filter((span) => span.kind === "llm");
    expect(llms.map((span) => span.usage?.total_tokens ?? null)).toEqual(
      expect.arrayContaining([15, 50, 72, 12, 2098]),
    );
    expect(llms.every((span) => span.model === texts.model)).toBe(true);
    const failed = llms.find((span) => span.status === "error");
    expect(failed?.status_message).toBeTruthy();
  });
});
