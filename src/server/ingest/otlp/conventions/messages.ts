/**
 * Chat messages as Cairn stores a span's input and output when they are messages: a JSON list
 * of `{role, content}`, whatever convention they arrived in (OpenInference's flattened
 * `llm.input_messages.N.*`, GenAI `parts`, the AI SDK's prompt JSON, OpenLLMetry's
 * `gen_ai.prompt.N.*`, OTel log events). Tool calls and tool results are kept.
 */
export interface ChatMessage {
  role: string;
  /** The text of the message; null for an assistant turn that only calls tools. */
  content: string | null;
  /** The tool calls of an assistant turn. */
  tool_calls?: ToolCall[];
  /** For a tool result: the id of the call it answers. */
  tool_call_id?: string;
  /** A tool result's tool name, or a participant's name. */
  name?: string;
}

export interface ToolCall {
  id?: string;
  name: string;
  /** The arguments as the model wrote them (usually JSON text). */
  arguments: string;
}

/** The stored form of a list of messages. */
export function messagesText(messages: readonly ChatMessage[]): string {
  return JSON.stringify(messages);
}

/**
 * Messages in OpenAI's chat shape (`{role, content, tool_calls: [{id, function: {name,
 * arguments}}], tool_call_id, name}`), which the previous GenAI conventions and OpenLLMetry
 * also use, flattened or as JSON. Content given as a list of parts keeps its text parts.
 * Undefined when the value is not such a list.
 */
export function fromOpenAiMessages(value: unknown): ChatMessage[] | undefined {
  const list = Array.isArray(value) ? value : undefined;
  if (list === undefined || list.length === 0) return undefined;
  const messages: ChatMessage[] = [];
  for (const item of list) {
    const record = objectOf(item);
    const role = stringOf(record?.role);
    if (record === undefined || role === undefined) return undefined;
    const message: ChatMessage = { role, content: contentText(record.content) };
    const calls = arrayOf(record.tool_calls)
      .map(toolCallOf)
      .filter((call) => call !== undefined);
    if (calls.length > 0) message.tool_calls = calls;
    const callId = stringOf(record.tool_call_id);
    if (callId !== undefined) message.tool_call_id = callId;
    const name = stringOf(record.name);
    if (name !== undefined) message.name = name;
    messages.push(message);
  }
  return messages;
}

/** An OpenAI-shaped tool call (`{id, function: {name, arguments}}` or `{id, name, arguments}`). */
export function toolCallOf(value: unknown): ToolCall | undefined {
  const record = objectOf(value);
  if (record === undefined) return undefined;
  const fn = objectOf(record.function) ?? record;
  const name = stringOf(fn.name);
  if (name === undefined) return undefined;
  const call: ToolCall = { name, arguments: argumentsText(fn.arguments ?? fn.input ?? fn.args) };
  const id = stringOf(record.id);
  if (id !== undefined) call.id = id;
  return call;
}

/** Tool-call arguments as text: JSON text stays as it is, an object becomes JSON. */
export function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The text of message content: a string, or the text parts of a list of parts joined. */
export function contentText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value))
    return value === undefined || value === null ? null : JSON.stringify(value);
  const texts = value
    .map((part) => {
      if (typeof part === "string") return part;
      const record = objectOf(part);
      return stringOf(record?.text) ?? stringOf(record?.content);
    })
    .filter((text) => text !== undefined);
  return texts.length === 0 ? null : texts.join("");
}

/** A plain object, or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A list, or an empty one. */
export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A non-empty string, or undefined. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
