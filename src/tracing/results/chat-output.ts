/** A tool call as OpenAI's chat completions write it. */
export interface ChatToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** What an assistant turn that calls tools reads as: its text and its calls. */
export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls: ChatToolCall[];
}

interface ToolCallDelta {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

interface ChatChunk {
  object: "chat.completion.chunk";
  choices: Array<{
    index?: number;
    delta?: { content?: string | null; tool_calls?: ToolCallDelta[] | null };
  }>;
}

/** Whether `value` is one chunk of an OpenAI chat-completions stream. */
export function isChatChunk(value: unknown): value is ChatChunk {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { object?: unknown }).object === "chat.completion.chunk" &&
    Array.isArray((value as ChatChunk).choices)
  );
}

/**
 * The readable output of a streamed chat completion: the first choice's text deltas joined, or,
 * when it calls tools, the assistant message with its tool calls assembled from their deltas.
 */
export function chatChunksOutput(chunks: readonly ChatChunk[]): string | AssistantMessage {
  let text = "";
  const calls: ChatToolCall[] = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      if ((choice.index ?? 0) !== 0 || choice.delta == null) continue;
      if (typeof choice.delta.content === "string") text += choice.delta.content;
      for (const delta of choice.delta.tool_calls ?? []) addToolCallDelta(calls, delta);
    }
  }
  if (calls.length === 0) return text;
  return {
    role: "assistant",
    content: text === "" ? null : text,
    tool_calls: calls.filter(Boolean),
  };
}

// The first delta of a call brings its id and name; the next ones, pieces of its arguments.
function addToolCallDelta(calls: ChatToolCall[], delta: ToolCallDelta): void {
  const index = delta.index ?? calls.length;
  let call = calls[index];
  if (call === undefined) {
    call = { id: "", type: "function", function: { name: "", arguments: "" } };
    calls[index] = call;
  }
  if (typeof delta.id === "string") call.id = delta.id;
  if (typeof delta.type === "string") call.type = delta.type;
  if (typeof delta.function?.name === "string") call.function.name += delta.function.name;
  if (typeof delta.function?.arguments === "string") {
    call.function.arguments += delta.function.arguments;
  }
}

/**
 * The readable output of a chat completion (`object: "chat.completion"`): the first choice's
 * text, or its message when it calls tools; `undefined` for anything else.
 */
export function chatCompletionOutput(value: unknown): string | AssistantMessage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { object, choices } = value as { object?: unknown; choices?: unknown };
  if (object !== "chat.completion" || !Array.isArray(choices)) return undefined;
  const message = (choices[0] as { message?: unknown } | undefined)?.message;
  if (typeof message !== "object" || message === null) return undefined;
  const { content, tool_calls: toolCalls } = message as { content?: unknown; tool_calls?: unknown };
  const text = typeof content === "string" ? content : null;
  if (Array.isArray(toolCalls) && toolCalls.length > 0) {
    return { role: "assistant", content: text, tool_calls: toolCalls as ChatToolCall[] };
  }
  return text ?? undefined;
}
