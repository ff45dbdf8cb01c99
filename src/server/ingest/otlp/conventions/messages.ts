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
