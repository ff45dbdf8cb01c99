import {
  type Document,
  type Embedding,
  getDocumentAttributes,
  getEmbeddingAttributes,
  getRetrieverAttributes,
  getToolAttributes,
  setMetadata,
  setSession,
  setTags,
  setUser,
  traceEmbedding,
  traceReranker,
  traceRetriever,
  traceTool,
} from "@arizeai/openinference-core";
import { OpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
// A dependency of openinference-core, where OpenInference's attribute names are defined.
import { SemanticConventions } from "@arizeai/openinference-semantic-conventions";
import { context, type Tracer } from "@opentelemetry/api";
import type OpenAI from "openai";
import { clientScenarios, openaiModule } from "./openai-client.js";
import type { RecorderContext } from "./recorder-context.js";
import { texts } from "./scenarios.js";

/**
 * OpenInference's OpenAI instrumentation, with a session, user, metadata and tags set on the
 * first chat through openinference-core's context setters; then the retriever, reranker,
 * embedding and tool spans the LlamaIndex and LangChain instrumentations make, written with
 * openinference-core's helpers.
 */
export async function openInference({ baseURL, tracerProvider }: RecorderContext): Promise<void> {
  const instrumentation = new OpenAIInstrumentation({ tracerProvider });
  // Typed as the client class, though it patches the module (module.OpenAI.Chat...).
  instrumentation.manuallyInstrument(openaiModule() as typeof OpenAI);
  const tagged = setTags(
    setMetadata(
      setUser(setSession(context.active(), { sessionId: texts.session }), { userId: texts.user }),
      { tenant: texts.tenant },
    ),
    [...texts.tags],
  );
  await clientScenarios(baseURL, (work) => context.with(tagged, work));
  await frameworkSpans(tracerProvider.getTracer("openinference-app"));
}

const documents: Document[] = [
  {
    id: "doc-1",
    content: "Paris is the capital of France.",
    score: 0.92,
    metadata: { source: "atlas" },
  },
  { id: "doc-2", content: "France is in Europe.", score: 0.41 },
];

// Typed by openinference-core's own @opentelemetry/api, which may be another copy.
type Attributes = ReturnType<typeof getDocumentAttributes>;

const documentAttributes = (list: readonly Document[], prefix: string): Attributes =>
  Object.assign(
    {},
    ...list.map((document, index) => getDocumentAttributes(document, index, prefix)),
  );

// Each is a trace of its own, named as the fixture's readers expect: retrieve, rerank, embed,
// get_weather.
async function frameworkSpans(tracer: Tracer): Promise<void> {
  const retrieve = traceRetriever(async (_query: string) => documents, {
    tracer,
    name: "retrieve",
    processOutput: (found) => getRetrieverAttributes({ documents: found }),
  });
  await retrieve(texts.question);

  const rerank = traceReranker(
    async (_query: string, candidates: Document[]) => candidates.slice(0, 1).map(rescored),
    {
      tracer,
      name: "rerank",
      attributes: {
        [SemanticConventions.RERANKER_MODEL_NAME]: "rerank-english-v3.0",
        [SemanticConventions.RERANKER_TOP_K]: 1,
      },
      processInput: (query, candidates) => ({
        [SemanticConventions.RERANKER_QUERY]: query,
        ...documentAttributes(candidates, SemanticConventions.RERANKER_INPUT_DOCUMENTS),
      }),
      processOutput: (ranked: Document[]) =>
        documentAttributes(ranked, SemanticConventions.RERANKER_OUTPUT_DOCUMENTS),
    },
  );
  await rerank(texts.question, documents);

  const embed = traceEmbedding(
    async (values: readonly string[]): Promise<Embedding[]> =>
      values.map((text, index) => ({ text, vector: [0.1 + 0.2 * index, 0.2 + 0.2 * index] })),
    {
      tracer,
      name: "embed",
      processInput: () => ({}),
      processOutput: (embeddings) =>
        getEmbeddingAttributes({ modelName: texts.embeddingModel, embeddings }),
    },
  );
  await embed(texts.embedded);

  const getWeather = traceTool(async (_input: { city: string }) => ({ temperature: 21 }), {
    tracer,
    name: "get_weather",
    attributes: getToolAttributes({
      name: "get_weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    }),
  });
  await getWeather({ city: "Paris" });
}

function rescored(document: Document): Document {
  return { ...document, score: 0.99 };
}
