import type { SpanKind } from "../../../../core/wire/index.js";
import {
  type AttributeReader,
  count,
  name,
  sessionId,
  strings,
  text,
} from "../attribute-reader.js";
import { type ConventionFields, derived } from "./fields.js";
import {
  argumentsText,
  arrayOf,
  type ChatMessage,
  contentText,
  messagesText,
  objectOf,
  stringOf,
  type ToolCall,
} from "./messages.js";
import { asText, parseJson } from "./tree.js";

// The AI SDK's operations (`ai.operationId`): the call a user makes, the model calls inside
// it, and tool executions. generateText and streamText run the tool loop, as an agent does;
// they repeat their steps' usage, which therefore counts only on the model calls.
const operations: Readonly<Record<string, SpanKind>> = {
  "ai.generateText": "agent",
  "ai.streamText": "agent",
  "ai.generateObject": "chain",
  "ai.streamObject": "chain",
  "ai.embed": "chain",
  "ai.embedMany": "chain",
  "ai.rerank": "retrieval",
  "ai.generateText.doGenerate": "llm",
  "ai.streamText.doStream": "llm",
  "ai.generateObject.doGenerate": "llm",
  "ai.streamObject.doStream": "llm",
  "ai.embed.doEmbed": "embedding",
  "ai.embedMany.doEmbed": "embedding",
  "ai.toolCall": "tool",
};

// The calls a user makes, named after `functionId` when the user gave one.
const userCalls = new Set([
  "ai.generateText",
  "ai.streamText",
  "ai.generateObject",
  "ai.streamObject",
  "ai.embed",
  "ai.embedMany",
]);

// Metadata: `telemetry.metadata` of AI SDK 4–6, the runtime context AI SDK 7 records for the
// keys named in `includeRuntimeContext`.
const metadataPrefixes = ["ai.telemetry.metadata.", "ai.settings.context."];

/**
 * The Vercel AI SDK's own attributes (`ai.*`, its `LegacyOpenTelemetry` integration and AI SDK
 * 4 to 6): `ai.operationId`, `ai.model.id`, `ai.prompt`, `ai.prompt.messages`,
 * `ai.response.text`/`.toolCalls`/`.object`, `ai.toolCall.*`, `ai.usage.*`, `ai.value(s)`,
 * `ai.telemetry.functionId` and `ai.telemetry.metadata.*` (sessionId, userId and tags read as
 * Cairn's session, user and tags).
 */
export function aiSdk(reader: AttributeReader): ConventionFields {
  const metadata = metadataOf(reader);
  const context = {
    session: metadata.session,
    user: metadata.user,
    tags: metadata.tags,
    metadata: metadata.rest,
  };
  const operation = stringOf(reader.get("ai.operationId"));
  if (operation === undefined) return context;
  const kind = operations[operation];
  const functionId = stringOf(reader.get("ai.telemetry.functionId"));
  return {
    kind: derived(kind),
    name:
      kind === "tool"
        ? reader.find(["ai.toolCall.name"], name)
        : userCalls.has(operation)
          ? derived(functionId)
          : undefined,
    model: reader.find(["ai.model.id", "ai.response.model"], name),
    usage: {
      prompt: reader.find(
        ["ai.usage.inputTokens", "ai.usage.promptTokens", "ai.usage.tokens"],
        count,
      ),
      completion: reader.find(["ai.usage.outputTokens", "ai.usage.completionTokens"], count),
      total: reader.find(["ai.usage.totalTokens"], count),
      cached: reader.find(
        ["ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens"],
        count,
      ),
      reasoning: reader.find(
        ["ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens"],
        count,
      ),
    },
    input:
      kind === "tool"
        ? reader.find(["ai.toolCall.args", "ai.toolCall.input"], text)
        : (derived(promptMessages(reader)) ?? derived(embeddedValues(reader))),
    output:
      kind === "tool"
        ? reader.find(["ai.toolCall.result", "ai.toolCall.output"], text)
        : (derived(responseMessages(reader)) ??
          reader.find(["ai.response.text", "ai.response.object"], text)),
    ...context,
  };
}

function metadataOf(reader: AttributeReader) {
  const under = (fields: readonly string[]) =>
    metadataPrefixes.flatMap((prefix) => fields.map((field) => `${prefix}${field}`));
  const session = reader.find(under(["sessionId", "session_id"]), sessionId);
  const user = reader.find(under(["userId", "user_id"]), name);
  const tags = reader.find(under(["tags"]), strings);
  const used = new Set([...(session?.keys ?? []), ...(user?.keys ?? []), ...(tags?.keys ?? [])]);
  const rest: Record<string, unknown> = {};
  const keys: string[] = [];
  for (const prefix of metadataPrefixes) {
    for (const key of reader.keysUnder(prefix)) {
      if (used.has(key)) continue;
      rest[key.slice(prefix.length)] = reader.get(key);
      keys.push(key);
    }
  }
  return { session, user, tags, rest: keys.length === 0 ? undefined : { value: rest, keys } };
}

/**
 * The messages sent: `ai.prompt.messages` on a model call, `ai.prompt` (`{system, prompt,
 * messages}`) on the call around it.
 */
function promptMessages(reader: AttributeReader): string | undefined {
  const messages = aiSdkMessages(parseJson(stringOf(reader.get("ai.prompt.messages"))));
  if (messages !== undefined) return messagesText(messages);
  const prompt = objectOf(parseJson(stringOf(reader.get("ai.prompt"))));
  if (prompt === undefined) return undefined;
  const list: ChatMessage[] = [];
  const system = stringOf(prompt.system);
  if (system !== undefined) list.push({ role: "system", content: system });
  if (typeof prompt.prompt === "string") list.push({ role: "user", content: prompt.prompt });
  else list.push(...(aiSdkMessages(prompt.prompt ?? prompt.messages) ?? []));
  return list.length === 0 ? undefined : messagesText(list);
}

/** The answer of a model call that called tools: one assistant message with its calls. */
function responseMessages(reader: AttributeReader): string | undefined {
  const calls = arrayOf(parseJson(stringOf(reader.get("ai.response.toolCalls"))))
    .map((call) => aiSdkToolCall(objectOf(call)))
    .filter((call) => call !== undefined);
  if (calls.length === 0) return undefined;
  const content = stringOf(reader.get("ai.response.text")) ?? null;
  return messagesText([{ role: "assistant", content, tool_calls: calls }]);
}

/** `ai.value` (one JSON value) or `ai.values` (a list of them): the texts embedded. */
function embeddedValues(reader: AttributeReader): string | undefined {
  const one = reader.get("ai.value");
  if (typeof one === "string") return textOfJson(one);
  const many = reader.get("ai.values");
  if (!Array.isArray(many)) return undefined;
  return JSON.stringify(many.map((each) => (typeof each === "string" ? textOfJson(each) : each)));
}

function textOfJson(value: string): string {
  const parsed = parseJson(value);
  return typeof parsed === "string" ? parsed : value;
}

/**
 * AI SDK messages (`{role, content: string | [{type: "text", text} | {type: "tool-call",
 * toolCallId, toolName, input|args} | {type: "tool-result", toolCallId, toolName,
 * output|result}]}`) as chat messages; each tool result becomes a `tool` message.
 */
function aiSdkMessages(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const messages: ChatMessage[] = [];
  for (const item of value) {
    const record = objectOf(item);
    const role = stringOf(record?.role);
    if (record === undefined || role === undefined) return undefined;
    const parts = Array.isArray(record.content) ? record.content : undefined;
    if (parts === undefined) {
      messages.push({ role, content: contentText(record.content) });
      continue;
    }
    const calls: ToolCall[] = [];
    for (const part of parts) {
      const fields = objectOf(part);
      if (fields?.type === "tool-call") {
        const call = aiSdkToolCall(fields);
        if (call !== undefined) calls.push(call);
      }
      if (fields?.type === "tool-result") {
        const result: ChatMessage = {
          role: "tool",
          content: asText(toolOutput(fields.output ?? fields.result)) ?? "",
        };
        const id = stringOf(fields.toolCallId);
        if (id !== undefined) result.tool_call_id = id;
        const tool = stringOf(fields.toolName);
        if (tool !== undefined) result.name = tool;
        messages.push(result);
      }
    }
    const texts = parts.filter((part) => objectOf(part)?.type === "text");
    if (texts.length === 0 && calls.length === 0) continue;
    const message: ChatMessage = { role, content: contentText(texts) };
    if (calls.length > 0) message.tool_calls = calls;
    messages.push(message);
  }
  return messages;
}

function aiSdkToolCall(fields: Record<string, unknown> | undefined): ToolCall | undefined {
  const name = stringOf(fields?.toolName);
  if (fields === undefined || name === undefined) return undefined;
  const call: ToolCall = { name, arguments: argumentsText(fields.input ?? fields.args) };
  const id = stringOf(fields.toolCallId);
  if (id !== undefined) call.id = id;
  return call;
}

// AI SDK 5 and later wrap a tool's output as {type: "json" | "text", value}.
function toolOutput(output: unknown): unknown {
  const record = objectOf(output);
  return record !== undefined && typeof record.type === "string" && "value" in record
    ? record.value
    : output;
}
