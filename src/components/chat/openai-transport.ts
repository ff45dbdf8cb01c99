import { ChatError } from "./chat-error.js";
import { fetchStream, parseEventJson, readEventData } from "./sse.js";
import type {
  ChatMessage,
  ChatSendOptions,
  ChatStreamPart,
  ChatTransport,
  ChatUsage,
  ToolCallPart,
} from "./types.js";

export interface OpenAICompatibleTransportOptions {
  /** Up to the version, e.g. `https://api.openai.com/v1` or your proxy's `/api/openai/v1`. */
  readonly baseURL: string;
  readonly model: string;
  /**
   * Sent as `Authorization: Bearer`. Anything the browser holds is public: use a proxy or a
   * short-lived key, never a project's secret key.
   */
  readonly apiKey?: string | undefined;
  readonly headers?: Record<string, string> | (() => Record<string, string>) | undefined;
  /** Fields added to each request: `tools`, `temperature` … */
  readonly body?: Record<string, unknown> | undefined;
  /** A system message put first. */
  readonly system?: string | undefined;
  readonly fetch?: typeof fetch | undefined;
}

interface CompletionChunk {
  model?: string;
  choices?: Array<{
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  } | null;
  error?: { message?: string };
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  started: boolean;
}

const finishReasons: Record<string, string> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
  content_filter: "content-filter",
};

/**
 * A transport for any OpenAI-compatible `chat/completions` endpoint, streamed
 * (`stream: true`, with the usage chunk): text, reasoning and tool calls (their argument deltas
 * assembled by index) become UI message stream parts; the usage is reported to the tracer.
 */
export function createOpenAICompatibleTransport(
  options: OpenAICompatibleTransportOptions,
): ChatTransport {
  const url = `${options.baseURL.replace(/\/+$/, "")}/chat/completions`;
  return {
    async *send(messages: readonly ChatMessage[], { signal, traceparent }: ChatSendOptions) {
      const fetchFunction = options.fetch ?? globalThis.fetch.bind(globalThis);
      const extraHeaders =
        typeof options.headers === "function" ? options.headers() : options.headers;
      const body = await fetchStream(fetchFunction, url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
          ...(traceparent === undefined ? {} : { traceparent }),
          ...extraHeaders,
        },
        body: JSON.stringify({
          ...options.body,
          model: options.model,
          messages: toOpenAIMessages(messages, options.system),
          stream: true,
          stream_options: { include_usage: true },
        }),
        signal,
      });
      yield* readCompletionStream(readEventData(body, signal), url);
    },
  };
}

async function* readCompletionStream(
  events: AsyncIterable<string>,
  url: string,
): AsyncGenerator<ChatStreamPart> {
  yield { type: "start" };
  const calls = new Map<number, PendingCall>();
  let open: "text" | "reasoning" | undefined;
  let blocks = 0;
  let finishReason: string | undefined;
  let done = false;
  const close = function* (): Generator<ChatStreamPart> {
    if (open !== undefined) yield { type: `${open}-end`, id: `${open}-${blocks}` };
    open = undefined;
  };
  const write = function* (kind: "text" | "reasoning", delta: string): Generator<ChatStreamPart> {
    if (open !== kind) {
      yield* close();
      blocks++;
      open = kind;
      yield { type: `${kind}-start`, id: `${kind}-${blocks}` };
    }
    yield { type: `${kind}-delta`, id: `${kind}-${blocks}`, delta };
  };
  for await (const data of events) {
    if (data === "[DONE]") {
      done = true;
      break;
    }
    const chunk = parseEventJson(data, url) as CompletionChunk;
    if (chunk.error !== undefined) {
      throw new ChatError("stream_error", chunk.error.message ?? `${url} sent an error`);
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    const reasoning = delta?.reasoning_content ?? delta?.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") yield* write("reasoning", reasoning);
    if (typeof delta?.content === "string" && delta.content !== "") {
      yield* write("text", delta.content);
    }
    for (const call of delta?.tool_calls ?? []) {
      let pending = calls.get(call.index);
      if (pending === undefined) {
        pending = { id: call.id ?? `call-${call.index}`, name: "", arguments: "", started: false };
        calls.set(call.index, pending);
      }
      if (call.id !== undefined) pending.id = call.id;
      if (call.function?.name !== undefined) pending.name += call.function.name;
      const argumentsDelta = call.function?.arguments ?? "";
      pending.arguments += argumentsDelta;
      if (!pending.started && pending.name !== "") {
        yield* close();
        pending.started = true;
        yield { type: "tool-input-start", toolCallId: pending.id, toolName: pending.name };
        if (pending.arguments !== "") {
          yield {
            type: "tool-input-delta",
            toolCallId: pending.id,
            inputTextDelta: pending.arguments,
          };
        }
      } else if (pending.started && argumentsDelta !== "") {
        yield { type: "tool-input-delta", toolCallId: pending.id, inputTextDelta: argumentsDelta };
      }
    }
    if (choice?.finish_reason != null) finishReason = choice.finish_reason;
    if (chunk.usage != null) {
      yield {
        type: "message-metadata",
        messageMetadata: { usage: usageOf(chunk.usage), model: chunk.model },
      };
    }
  }
  if (!done && finishReason === undefined) {
    throw new ChatError(
      "connection_dropped",
      "The connection dropped before the answer finished. Retry to ask again.",
    );
  }
  yield* close();
  for (const call of calls.values()) {
    try {
      const input: unknown = call.arguments === "" ? {} : JSON.parse(call.arguments);
      yield { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input };
    } catch {
      yield {
        type: "tool-input-error",
        toolCallId: call.id,
        toolName: call.name,
        input: call.arguments,
        errorText: "The model sent arguments that are not JSON.",
      };
    }
  }
  yield {
    type: "finish",
    ...(finishReason === undefined
      ? {}
      : { finishReason: finishReasons[finishReason] ?? finishReason }),
  };
}

function usageOf(usage: NonNullable<CompletionChunk["usage"]>): ChatUsage {
  const result: { -readonly [K in keyof ChatUsage]: ChatUsage[K] } = {};
  if (usage.prompt_tokens !== undefined) result.inputTokens = usage.prompt_tokens;
  if (usage.completion_tokens !== undefined) result.outputTokens = usage.completion_tokens;
  if (usage.total_tokens !== undefined) result.totalTokens = usage.total_tokens;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) result.cachedInputTokens = cached;
  return result;
}

type OpenAIMessage = Record<string, unknown>;

/** The conversation as chat-completions messages: tool calls and their results included. */
export function toOpenAIMessages(
  messages: readonly ChatMessage[],
  system?: string,
): OpenAIMessage[] {
  const result: OpenAIMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
  for (const message of messages) {
    const text = message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
    if (message.role !== "assistant") {
      const images = message.parts.flatMap((part) =>
        part.type === "file" && part.mediaType.startsWith("image/")
          ? [{ type: "image_url", image_url: { url: part.url } }]
          : [],
      );
      result.push({
        role: message.role,
        content: images.length === 0 ? text : [{ type: "text", text }, ...images],
      });
      continue;
    }
    const tools = message.parts.filter(
      (part): part is ToolCallPart =>
        part.type === "dynamic-tool" && part.state !== "input-streaming",
    );
    result.push({
      role: "assistant",
      content: text === "" ? null : text,
      ...(tools.length === 0
        ? {}
        : {
            tool_calls: tools.map((tool) => ({
              id: tool.toolCallId,
              type: "function",
              function: { name: tool.toolName, arguments: JSON.stringify(tool.input ?? {}) },
            })),
          }),
    });
    for (const tool of tools) {
      if (tool.state !== "output-available" && tool.state !== "output-error") continue;
      result.push({
        role: "tool",
        tool_call_id: tool.toolCallId,
        content:
          tool.state === "output-error"
            ? (tool.errorText ?? "error")
            : typeof tool.output === "string"
              ? tool.output
              : JSON.stringify(tool.output),
      });
    }
  }
  return result;
}
