import { parseSpanKind, type SpanKind } from "../../../core/wire/index.js";
import { attributes as names } from "../../../tracing/attributes.js";
import type { AttributeReader, ValueReader } from "./attribute-reader.js";

// OpenInference kinds Cairn has no kind of its own for. A reranker reorders retrieved
// documents, so it is part of retrieval; GUARDRAIL, EVALUATOR, PROMPT and UNKNOWN read as chain.
const openInferenceExtras: Readonly<Record<string, SpanKind>> = { reranker: "retrieval" };

// `gen_ai.operation.name` values of the OpenTelemetry GenAI conventions.
const genAiOperations: Readonly<Record<string, SpanKind>> = {
  chat: "llm",
  text_completion: "llm",
  generate_content: "llm",
  embeddings: "embedding",
  execute_tool: "tool",
  invoke_agent: "agent",
  create_agent: "agent",
};

const cairnKind: ValueReader<SpanKind> = (value) =>
  typeof value === "string" ? parseSpanKind(value) : undefined;

const extraKind: ValueReader<SpanKind> = (value) =>
  typeof value === "string" ? openInferenceExtras[value.toLowerCase()] : undefined;

const operationKind: ValueReader<SpanKind> = (value) =>
  typeof value === "string" ? genAiOperations[value] : undefined;

/**
 * The kind of a span: `openinference.span.kind` first (CHAIN, RETRIEVER, TOOL, AGENT, LLM,
 * EMBEDDING, and RERANKER as retrieval), then `gen_ai.operation.name`, else `chain`. The
 * OpenInference attribute is lifted only when it names a Cairn kind, so RERANKER or GUARDRAIL
 * stay visible in the attributes; `gen_ai.operation.name` is always kept, as the SDK keeps it.
 */
export function spanKindOf(reader: AttributeReader): SpanKind {
  return (
    reader.take([names.openInferenceKind], cairnKind) ??
    reader.find([names.openInferenceKind], extraKind)?.value ??
    reader.find([names.genAiOperation], operationKind)?.value ??
    "chain"
  );
}
