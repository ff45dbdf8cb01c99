import { parseSpanKind, type SpanKind } from "../../../../core/wire/index.js";
import { parseMetadata } from "../../../../core/wire/metadata.js";
import { attributes as names } from "../../../../tracing/attributes.js";
import {
  type AttributeReader,
  amount,
  count,
  name,
  sessionId,
  strings,
  text,
} from "../attribute-reader.js";
import { type ConventionFields, derived, type Found } from "./fields.js";
import { type ChatMessage, messagesText, toolCallOf } from "./messages.js";
import { asText, at, listAt, numberAt, stringAt, subtree, type Tree } from "./tree.js";

// OpenInference kinds Cairn has no kind of its own for. A reranker reorders retrieved
// documents, so it is part of retrieval; GUARDRAIL, EVALUATOR, PROMPT and UNKNOWN read as chain.
const extraKinds: Readonly<Record<string, SpanKind>> = { reranker: "retrieval" };

/**
 * OpenInference (Arize Phoenix; also what Cairn's SDK writes): `openinference.span.kind`,
 * `input.value`/`output.value`, `llm.input_messages.N.message.*` and `llm.output_messages`,
 * `llm.token_count.*` with cache and reasoning details, `llm.cost.total`, `retrieval.documents`,
 * `reranker.*`, `embedding.embeddings.N.embedding.text`, `tool.*`, `session.id`, `user.id`,
 * `tag.tags` and `metadata`.
 */
export function openInference(reader: AttributeReader): ConventionFields {
  const kind = kindOf(reader);
  const inputMessages = messagesAt(reader, "llm.input_messages");
  const outputMessages = messagesAt(reader, "llm.output_messages");
  const documents = documentsAt(reader, "retrieval.documents") ?? rerankedDocuments(reader);
  return {
    kind,
    name: kind?.value === "tool" ? reader.find(["tool.name"], name) : undefined,
    model: reader.find([names.llmModelName, "embedding.model_name", "reranker.model_name"], name),
    usage: {
      prompt: reader.find([names.llmPromptTokens], count),
      completion: reader.find([names.llmCompletionTokens], count),
      total: reader.find([names.llmTotalTokens], count),
      cached: reader.find(["llm.token_count.prompt_details.cache_read"], count),
      reasoning: reader.find(["llm.token_count.completion_details.reasoning"], count),
    },
    cost: reader.find([names.llmCostTotal], amount),
    input:
      derived(inputMessages && messagesText(inputMessages)) ??
      derived(embeddingTexts(reader)) ??
      reader.find([names.inputValue], text) ??
      derived(rerankerQuery(reader)) ??
      (kind?.value === "tool" ? reader.find(["tool.parameters"], text) : undefined),
    output:
      derived(outputMessages && messagesText(outputMessages)) ??
      derived(documents) ??
      reader.find([names.outputValue], text),
    session: reader.find([names.sessionId], sessionId),
    user: reader.find(["user.id"], name),
    tags: reader.find([names.tags], strings),
    metadata: metadataOf(reader),
  };
}

function kindOf(reader: AttributeReader): Found<SpanKind> | undefined {
  const key = names.openInferenceKind;
  const value = reader.get(key);
  if (typeof value !== "string") return undefined;
  const kind = parseSpanKind(value);
  if (kind !== undefined) return { value: kind, keys: [key] };
  // RERANKER and the like stay visible in the attributes.
  return derived(extraKinds[value.toLowerCase()]);
}

function metadataOf(reader: AttributeReader): Found<Record<string, unknown>> | undefined {
  const found = reader.find([names.metadata], text);
  return found === undefined ? undefined : { value: parseMetadata(found.value), keys: found.keys };
}

/** `prefix.N.message.{role, content, contents, tool_calls, tool_call_id, name}` as messages. */
function messagesAt(reader: AttributeReader, prefix: string): ChatMessage[] | undefined {
  const list = listAt(subtree(reader, prefix));
  const messages: ChatMessage[] = [];
  for (const item of list) {
    const message = at(item, "message");
    const role = stringAt(message, "role");
    if (role === undefined) continue;
    const entry: ChatMessage = { role, content: contentOf(message) };
    const calls = listAt(message, "tool_calls")
      .map((call) => {
        const toolCall = at(call, "tool_call");
        return toolCallOf({
          id: stringAt(toolCall, "id"),
          function: {
            name: stringAt(toolCall, "function", "name"),
            arguments: stringAt(toolCall, "function", "arguments"),
          },
        });
      })
      .filter((call) => call !== undefined);
    if (calls.length > 0) entry.tool_calls = calls;
    const callId = stringAt(message, "tool_call_id");
    if (callId !== undefined) entry.tool_call_id = callId;
    const participant = stringAt(message, "name");
    if (participant !== undefined) entry.name = participant;
    messages.push(entry);
  }
  return messages.length === 0 ? undefined : messages;
}

// `message.content`, or the text parts of `message.contents.N.message_content`.
function contentOf(message: Tree | undefined): string | null {
  const content = stringAt(message, "content");
  if (content !== undefined) return content;
  const texts = listAt(message, "contents")
    .map((part) => stringAt(part, "message_content", "text"))
    .filter((part) => part !== undefined);
  return texts.length === 0 ? null : texts.join("");
}

/** `prefix.N.document.{id, content, score, metadata}` as a JSON list the scorers read. */
function documentsAt(reader: AttributeReader, prefix: string): string | undefined {
  const documents = listAt(subtree(reader, prefix))
    .map((item) => {
      const document = at(item, "document");
      const content = stringAt(document, "content");
      if (content === undefined) return undefined;
      const id = asText(at(document, "id"));
      const score = numberAt(document, "score");
      const metadata = stringAt(document, "metadata");
      return {
        ...(id === undefined ? {} : { id }),
        content,
        ...(score === undefined ? {} : { score }),
        ...(metadata === undefined ? {} : { metadata: parseMetadata(metadata) }),
      };
    })
    .filter((document) => document !== undefined);
  return documents.length === 0 ? undefined : JSON.stringify(documents);
}

function rerankedDocuments(reader: AttributeReader): string | undefined {
  return documentsAt(reader, "reranker.output_documents");
}

function rerankerQuery(reader: AttributeReader): string | undefined {
  const query = reader.get("reranker.query");
  return typeof query === "string" ? query : documentsAt(reader, "reranker.input_documents");
}

/** The texts embedded: the text itself for one, a JSON list for several. */
function embeddingTexts(reader: AttributeReader): string | undefined {
  const texts = listAt(subtree(reader, "embedding.embeddings"))
    .map((item) => stringAt(item, "embedding", "text"))
    .filter((each) => each !== undefined);
  if (texts.length === 0) return undefined;
  return texts.length === 1 ? texts[0] : JSON.stringify(texts);
}
