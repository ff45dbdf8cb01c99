import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { agentSession, configure, currentSpan, observe, shutdown } from "cairn-ai";
import { afterEach, describe, expect, it } from "vitest";

describe("OpenTelemetry attributes", () => {
  afterEach(async () => {
    await shutdown();
  });

  it("carry both OpenInference and GenAI conventions on the raw spans", async () => {
    // A plain OpenTelemetry exporter sees what Phoenix, Langfuse or any OTLP backend would.
    const exporter = new InMemorySpanExporter();
    configure({ exporter, exportMode: "immediate" });
    const session = agentSession({ id: "conv-7", tags: ["beta"] });
    await session.run(() =>
      observe(
        async (question: string) => {
          currentSpan().setTokenUsage({ prompt_tokens: 40, completion_tokens: 10 });
          return `answer to ${question}`;
        },
        { kind: "llm", model: "gpt-4o", tags: ["prod"], metadata: { prompt: "v2" } },
      )("q"),
    );
    const [span] = exporter.getFinishedSpans();
    // Text needs no mime type: OpenInference reads a missing one as text/plain.
    expect(span?.attributes["input.mime_type"]).toBeUndefined();
    expect(span?.attributes).toMatchObject({
      "openinference.span.kind": "LLM",
      "input.value": "q",
      "output.value": "answer to q",
      "llm.model_name": "gpt-4o",
      "llm.token_count.prompt": 40,
      "llm.token_count.completion": 10,
      "llm.token_count.total": 50,
      "session.id": "conv-7",
      "tag.tags": ["beta", "prod"],
      metadata: '{"prompt":"v2"}',
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.usage.input_tokens": 40,
      "gen_ai.usage.output_tokens": 10,
      "gen_ai.conversation.id": "conv-7",
    });
    expect(span?.attributes["llm.cost.total"]).toBeCloseTo(0.0002, 10);
    expect(span?.resource.attributes["service.name"]).toBe("cairn-app");
  });

  it("write JSON input with its mime type", () => {
    const exporter = new InMemorySpanExporter();
    configure({ exporter, exportMode: "immediate", serviceName: "search-api" });
    observe((query: { q: string }) => [query.q], { kind: "retrieval" })({ q: "cats" });
    const [span] = exporter.getFinishedSpans();
    expect(span?.attributes).toMatchObject({
      "openinference.span.kind": "RETRIEVER",
      "input.value": '{"q":"cats"}',
      "input.mime_type": "application/json",
      "output.value": '["cats"]',
      "output.mime_type": "application/json",
    });
    expect(span?.resource.attributes["service.name"]).toBe("search-api");
  });
});
