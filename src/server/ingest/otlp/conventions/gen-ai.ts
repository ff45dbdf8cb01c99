import type { SpanKind } from "../../../../core/wire/index.js";
import { attributes as names } from "../../../../tracing/attributes.js";
import { type AttributeReader, count, name, sessionId, text } from "../attribute-reader.js";
import type { OtlpSpanRecord } from "../otlp-records.js";
import { type ConventionFields, derived } from "./fields.js";
import {
  argumentsText,
  arrayOf,
  type ChatMessage,
  fromOpenAiMessages,
  messagesText,
  objectOf,
  stringOf,
  type ToolCall,
} from "./messages.js";
import { asText, parseJson, subtree } from "./tree.js";

// `gen_ai.operation.name` values of the OpenTelemetry GenAI conventions.
const operations: Readonly<Record<string, SpanKind>> = {
  chat: "llm",
  text_completion: "llm",
  generate_content: "llm",
  embeddings: "embedding",
  execute_tool: "tool",
  invoke_agent: "agent",
  create_agent: "agent",
};

// `llm.request.type` of the previous conventions (OpenLLMetry before GenAI 1.37).
const requestTypes: Readonly<Record<string, SpanKind>> = {
  chat: "llm",
  completion: "llm",
  embedding: "embedding",
  rerank: "retrieval",
};

/**
 * The OpenTelemetry GenAI conventions as they are now (1.37 and later: `gen_ai.input.messages`
 * and `gen_ai.output.messages` as JSON lists of parts, `gen_ai.system_instructions`,
 * `gen_ai.tool.call.arguments`/`.result`, `gen_ai.agent.name`, cache-read tokens), written by
 * the AI SDK's `@ai-sdk/otel`, OpenLLMetry and others.
 */
export function genAi(reader: AttributeReader): ConventionFields {
  const operation = reader.get(names.genAiOperation);
  const kind = typeof operation === "string" ? operations[operation] : undefined;
  const instructions = textOf(reader, "gen_ai.system_instructions");
  const system = partsText(parseJson(instructions) ?? instructions);
  const input = genAiMessages(parseJson(textOf(reader, "gen_ai.input.messages")));
  const output = genAiMessages(parseJson(textOf(reader, "gen_ai.output.messages")));
  const withSystem =
    system === undefined || input?.[0]?.role === "system"
      ? input
      : [{ role: "system", content: system }, ...(input ?? [])];
  return {
    // `gen_ai.operation.name` stays on the span, as Cairn's SDK keeps it.
    kind: derived(kind),
    name:
      kind === "agent"
        ? reader.find(["gen_ai.agent.name"], name)
        : kind === "tool"
          ? reader.find(["gen_ai.tool.name"], name)
          : undefined,
    model: reader.find([names.genAiRequestModel, "gen_ai.response.model"], name),
    usage: {
      prompt: reader.find([names.genAiInputTokens], count),
      completion: reader.find([names.genAiOutputTokens], count),
      total: reader.find(["gen_ai.usage.total_tokens"], count),
      cached: reader.find(
        ["gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"],
        count,
      ),
      reasoning: reader.find(
        ["gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens"],
        count,
      ),
    },
    input:
      derived(withSystem && withSystem.length > 0 ? messagesText(withSystem) : undefined) ??
      reader.find(["gen_ai.tool.call.arguments"], text),
    output:
      derived(output && messagesText(output)) ?? reader.find(["gen_ai.tool.call.result"], text),
    session: reader.find([names.genAiConversationId], sessionId),
    error: reader.find(["error.type"], name),
  };
}

/**
 * The GenAI conventions before 1.37, still written by OpenLLMetry's older instrumentations and
 * many others: `gen_ai.prompt.N.*` and `gen_ai.completion.N.*` flattened (or events
 * `gen_ai.content.prompt`/`.completion` holding JSON), `gen_ai.usage.prompt_tokens`,
 * `llm.request.type` and `llm.usage.total_tokens`.
 */
export function previousGenAi(reader: AttributeReader, span: OtlpSpanRecord): ConventionFields {
  const requestType = reader.get("llm.request.type");
  const prompt =
    fromOpenAiMessages(subtree(reader, "gen_ai.prompt")) ??
    fromOpenAiMessages(parseJson(eventText(span, "gen_ai.content.prompt", "gen_ai.prompt")));
  const completion =
    fromOpenAiMessages(completionList(subtree(reader, "gen_ai.completion"))) ??
    fromOpenAiMessages(
      completionList(parseJson(eventText(span, "gen_ai.content.completion", "gen_ai.completion"))),
    );
  return {
    kind: derived(typeof requestType === "string" ? requestTypes[requestType] : undefined),
    model: reader.find(["gen_ai.request.model", "gen_ai.response.model"], name),
    usage: {
      prompt: reader.find(["gen_ai.usage.prompt_tokens"], count),
      completion: reader.find(["gen_ai.usage.completion_tokens"], count),
      total: reader.find(["llm.usage.total_tokens"], count),
    },
    input: derived(prompt && messagesText(prompt)),
    output: derived(completion && messagesText(completion)),
  };
}

// Completions name their role only sometimes; they are the assistant's.
function completionList(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((item) => {
    const record = objectOf(item);
    return record === undefined || record.role !== undefined
      ? item
      : { ...record, role: "assistant" };
  });
}

function eventText(span: OtlpSpanRecord, event: string, key: string): string | undefined {
  const found = span.events.find((each) => each.name === event);
  const value = found?.attributes[key];
  return typeof value === "string" ? value : undefined;
}

function textOf(reader: AttributeReader, key: string): string | undefined {
  const value = reader.get(key);
  return typeof value === "string" ? value : undefined;
}

/**
 * GenAI messages (`[{role, parts: [{type: "text", content} | {type: "tool_call", id, name,
 * arguments} | {type: "tool_call_response", id, response} | …], finish_reason?}]`) as chat
 * messages: a tool response becomes a `tool` message of its own.
 */
export function genAiMessages(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const messages: ChatMessage[] = [];
  for (const item of value) {
    const record = objectOf(item);
    const role = stringOf(record?.role);
    if (record === undefined || role === undefined) return undefined;
    if (!Array.isArray(record.parts)) {
      // Some writers use OpenAI's shape under the same attribute.
      const openAi = fromOpenAiMessages([record]);
      if (openAi === undefined) return undefined;
      messages.push(...openAi);
      continue;
    }
    // Parts in order: a tool response closes the turn before it and is a message of its own.
    let texts: string[] = [];
    let calls: ToolCall[] = [];
    const flush = () => {
      if (texts.length === 0 && calls.length === 0) return;
      const message: ChatMessage = { role, content: texts.length === 0 ? null : texts.join("") };
      if (calls.length > 0) message.tool_calls = calls;
      const participant = stringOf(record.name);
      if (participant !== undefined) message.name = participant;
      messages.push(message);
      texts = [];
      calls = [];
    };
    for (const part of arrayOf(record.parts)) {
      const fields = objectOf(part);
      if (fields === undefined) continue;
      if (fields.type === "text" && typeof fields.content === "string") texts.push(fields.content);
      if (fields.type === "tool_call" && typeof fields.name === "string") {
        const call: ToolCall = { name: fields.name, arguments: argumentsText(fields.arguments) };
        const id = stringOf(fields.id);
        if (id !== undefined) call.id = id;
        calls.push(call);
      }
      if (fields.type === "tool_call_response") {
        flush();
        const response: ChatMessage = { role: "tool", content: asText(fields.response) ?? "" };
        const id = stringOf(fields.id);
        if (id !== undefined) response.tool_call_id = id;
        messages.push(response);
      }
    }
    flush();
  }
  return messages;
}

/** `gen_ai.system_instructions`: a list of parts (or a plain string) as one text. */
function partsText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  const texts = arrayOf(value)
    .map((part) => stringOf(objectOf(part)?.content))
    .filter((each) => each !== undefined);
  return texts.length === 0 ? undefined : texts.join("\n");
}
