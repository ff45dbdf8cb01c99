// What a span's input or output says, for showing it as a conversation: chat messages when it
// is a list of them (Cairn's stored form, OpenAI's, a request with `messages`, a completion
// with `choices`), else text or JSON as it is.

/** A chat message as Cairn stores one (`{role, content}`, with tool calls and results). */
export interface ChatMessage {
  readonly role: string;
  readonly content: string | null;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string }[];
  /** A tool result's tool name, or a participant's name. */
  readonly name?: string;
  /** The content is JSON, pretty-printed: show it as code. */
  readonly json?: boolean;
}

export type Payload =
  | { readonly kind: "messages"; readonly messages: readonly ChatMessage[] }
  | { readonly kind: "text"; readonly text: string; readonly json: boolean };

const truncationMarker = /…\[truncated: (\d+) characters in all\]$/;

/** The full length of a text the service cut (it ends with its marker), else undefined. */
export function truncatedLength(text: string | null | undefined): number | undefined {
  const match = text == null ? null : truncationMarker.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** Reads a stored input or output: messages when it is some, else text (or JSON) as it is. */
export function readPayload(text: string | null | undefined): Payload | undefined {
  if (text == null || text === "") return undefined;
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { kind: "text", text, json: false };
    }
    const messages = messagesIn(value);
    if (messages !== undefined) return { kind: "messages", messages };
    return { kind: "text", text: JSON.stringify(value, null, 2), json: true };
  }
  return { kind: "text", text, json: false };
}

/** The messages a value holds: a list, a request's `messages`, a completion's `choices`. */
export function messagesIn(value: unknown): ChatMessage[] | undefined {
  if (Array.isArray(value)) return messageList(value);
  const record = objectOf(value);
  if (record === undefined) return undefined;
  if (Array.isArray(record.messages)) return messageList(record.messages);
  if (Array.isArray(record.choices)) {
    const first = objectOf(record.choices[0]);
    const message = messageOf(first?.message);
    return message === undefined ? undefined : [message];
  }
  const single = messageOf(record);
  return single === undefined ? undefined : [single];
}

function messageList(list: readonly unknown[]): ChatMessage[] | undefined {
  if (list.length === 0) return undefined;
  const messages: ChatMessage[] = [];
  for (const item of list) {
    const message = messageOf(item);
    if (message === undefined) return undefined;
    messages.push(message);
  }
  return messages;
}

function messageOf(value: unknown): ChatMessage | undefined {
  const record = objectOf(value);
  if (record === undefined || typeof record.role !== "string") return undefined;
  if (!("content" in record) && !("tool_calls" in record) && !("parts" in record)) return undefined;
  const toolCalls = (Array.isArray(record.tool_calls) ? record.tool_calls : [])
    .map(toolCallOf)
    .filter((call) => call !== undefined);
  return {
    role: record.role,
    content: contentText(record.content ?? record.parts),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(typeof record.name === "string" ? { name: record.name } : {}),
  };
}

function toolCallOf(value: unknown): { name: string; arguments: string } | undefined {
  const record = objectOf(value);
  if (record === undefined) return undefined;
  const fn = objectOf(record.function) ?? record;
  if (typeof fn.name !== "string") return undefined;
  const args = fn.arguments ?? fn.input ?? fn.args;
  return {
    name: fn.name,
    arguments: args == null ? "" : typeof args === "string" ? args : JSON.stringify(args),
  };
}

/** A string, or the text parts of a list of parts joined by blank lines. */
function contentText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return value == null ? null : JSON.stringify(value);
  const texts = value
    .map((part) => {
      if (typeof part === "string") return part;
      const record = objectOf(part);
      return typeof record?.text === "string" ? record.text : undefined;
    })
    .filter((text) => text !== undefined);
  return texts.length === 0 ? null : texts.join("\n\n");
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
