import { createRequire } from "node:module";
import { context, metrics, type Tracer } from "@opentelemetry/api";
import type OpenAI from "openai";
import type { RecorderContext } from "./recorders.js";
import { texts } from "./scenarios.js";

const require = createRequire(import.meta.url);

/** The scenarios run with the official `openai` client, once an instrumentation patched it. */
async function clientScenarios(
  baseURL: string,
  around: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
) {
  // The CommonJS module, which the instrumentations patched (an ESM import is another copy).
  const { OpenAI: Client } = require("openai") as { OpenAI: typeof OpenAI };
  const client = new Client({ baseURL, apiKey: "sk-fake", maxRetries: 0 });
  const system = { role: "system" as const, content: texts.system };
  await around(() =>
    client.chat.completions.create({
      model: texts.model,
      messages: [system, { role: "user", content: texts.question }],
    }),
  );
  const tools = [
    {
      type: "function" as const,
      function: {
        name: "get_weather",
        description: "The weather in a city",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
    },
  ];
  const question = { role: "user" as const, content: texts.weatherQuestion };
  const first = await client.chat.completions.create({
    model: texts.model,
    messages: [question],
    tools,
  });
  const call = first.choices[0]?.message.tool_calls?.[0];
  await client.chat.completions.create({
    model: texts.model,
    tools,
    messages: [
      question,
      { role: "assistant", content: null, tool_calls: call === undefined ? [] : [call] },
      { role: "tool", tool_call_id: call?.id ?? "", content: JSON.stringify({ temperature: 21 }) },
    ],
  });
  const stream = await client.chat.completions.create({
    model: texts.model,
    messages: [{ role: "user", content: texts.streamQuestion }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const _chunk of stream) {
    // consumed whole, as an app showing the answer does
  }
  await client.embeddings.create({ model: texts.embeddingModel, input: [...texts.embedded] });
  await client.chat.completions.create({
    model: texts.model,
    messages: [{ role: "user", content: texts.cachedQuestion }],
  });
  await client.chat.completions
    .create({ model: texts.model, messages: [{ role: "user", content: texts.failingQuestion }] })
    .catch(() => undefined);
}

/** OpenInference's OpenAI instrumentation, with session, user, metadata and tags set. */
export async function openInference({ baseURL, tracerProvider }: RecorderContext): Promise<void> {
  const { OpenAIInstrumentation } = await import("@arizeai/openinference-instrumentation-openai");
  const core = await import("@arizeai/openinference-core");
  const instrumentation = new OpenAIInstrumentation({ tracerProvider });
  instrumentation.manuallyInstrument(require("openai"));
  const tagged = core.setTags(
    core.setMetadata(
      core.setUser(core.setSession(context.active(), { sessionId: texts.session }), {
        userId: texts.user,
      }),
      { tenant: texts.tenant },
    ),
    [...texts.tags],
  );
  await clientScenarios(baseURL, (work) => context.with(tagged, work));
  openInferenceSpans(tracerProvider.getTracer("openinference-app"), core);
}

// The spans the LlamaIndex and LangChain instrumentations make, written with OpenInference's
// own attribute names: a retriever, a reranker, an embedding and a tool.
function openInferenceSpans(
  tracer: Tracer,
  core: typeof import("@arizeai/openinference-core"),
): void {
  void core;
  const documents = (prefix: string) => ({
    [`${prefix}.0.document.id`]: "doc-1",
    [`${prefix}.0.document.content`]: "Paris is the capital of France.",
    [`${prefix}.0.document.score`]: 0.92,
    [`${prefix}.0.document.metadata`]: JSON.stringify({ source: "atlas" }),
    [`${prefix}.1.document.id`]: "doc-2",
    [`${prefix}.1.document.content`]: "France is in Europe.",
    [`${prefix}.1.document.score`]: 0.41,
  });
  tracer
    .startSpan("retrieve", {
      attributes: {
        "openinference.span.kind": "RETRIEVER",
        "input.value": texts.question,
        ...documents("retrieval.documents"),
      },
    })
    .end();
  tracer
    .startSpan("rerank", {
      attributes: {
        "openinference.span.kind": "RERANKER",
        "reranker.query": texts.question,
        "reranker.model_name": "rerank-english-v3.0",
        "reranker.top_k": 1,
        ...documents("reranker.input_documents"),
        "reranker.output_documents.0.document.id": "doc-1",
        "reranker.output_documents.0.document.content": "Paris is the capital of France.",
        "reranker.output_documents.0.document.score": 0.99,
      },
    })
    .end();
  tracer
    .startSpan("embed", {
      attributes: {
        "openinference.span.kind": "EMBEDDING",
        "embedding.model_name": texts.embeddingModel,
        "embedding.embeddings.0.embedding.text": texts.embedded[0],
        "embedding.embeddings.0.embedding.vector": [0.1, 0.2],
        "embedding.embeddings.1.embedding.text": texts.embedded[1],
        "embedding.embeddings.1.embedding.vector": [0.3, 0.4],
      },
    })
    .end();
  tracer
    .startSpan("get_weather", {
      attributes: {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "tool.description": "The weather in a city",
        "tool.parameters": JSON.stringify({
          type: "object",
          properties: { city: { type: "string" } },
        }),
        "input.value": JSON.stringify({ city: "Paris" }),
        "input.mime_type": "application/json",
        "output.value": JSON.stringify({ temperature: 21 }),
        "output.mime_type": "application/json",
      },
    })
    .end();
}

/** OpenLLMetry's OpenAI instrumentation as it is now (GenAI conventions). */
export async function openLlmetry({ baseURL, tracerProvider }: RecorderContext): Promise<void> {
  const { OpenAIInstrumentation } = await import("@traceloop/instrumentation-openai");
  const instrumentation = new OpenAIInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.manuallyInstrument(require("openai"));
  await clientScenarios(baseURL);
}

/** OpenLLMetry 0.22, the last release writing `gen_ai.prompt.N` / `gen_ai.completion.N`. */
export async function openLlmetryPrevious({
  baseURL,
  tracerProvider,
}: RecorderContext): Promise<void> {
  const { OpenAIInstrumentation } = await import("traceloop-instrumentation-openai-0.22");
  const instrumentation = new OpenAIInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.manuallyInstrument(require("openai"));
  await clientScenarios(baseURL);
}

/**
 * OpenTelemetry's own OpenAI instrumentation, content captured (as log records). It hooks
 * `require("openai")` for versions below 7, so its patch is applied to the module directly.
 */
export async function otelOpenAi({
  baseURL,
  tracerProvider,
  loggerProvider,
}: RecorderContext): Promise<void> {
  process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = "true";
  const { OpenAIInstrumentation } = await import("@opentelemetry/instrumentation-openai");
  const instrumentation = new OpenAIInstrumentation({ enabled: false });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setLoggerProvider(loggerProvider);
  // Its token metrics are made by setMeterProvider; the global no-op meter will do.
  instrumentation.setMeterProvider(metrics.getMeterProvider());
  instrumentation.enable();
  const module = require("openai") as unknown;
  const definitions = (
    instrumentation as unknown as {
      init(): Array<{ patch?: (exports: unknown, version?: string) => unknown }>;
    }
  ).init();
  for (const definition of definitions) definition.patch?.(module, "6.9.0");
  await clientScenarios(baseURL);
}
