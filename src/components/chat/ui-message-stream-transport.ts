import { ChatError } from "./chat-error.js";
import { fetchStream, parseEventJson, readEventData } from "./sse.js";
import type { ChatMessage, ChatSendOptions, ChatStreamPart, ChatTransport } from "./types.js";

type Resolvable<T> = T | (() => T);

export interface UIMessageStreamTransportOptions {
  /** The route that answers with an AI SDK UI message stream, e.g. `/api/chat`. */
  readonly api: string;
  /** Headers for each request (a function is called per request, for fresh tokens). */
  readonly headers?: Resolvable<Record<string, string>> | undefined;
  /** Fields sent next to `messages` in the request body. */
  readonly body?: Resolvable<Record<string, unknown>> | undefined;
  readonly credentials?: RequestCredentials | undefined;
  /** A fetch to use instead of the global one. */
  readonly fetch?: typeof fetch | undefined;
}

const resolve = <T>(value: Resolvable<T> | undefined): T | undefined =>
  typeof value === "function" ? (value as () => T)() : value;

/**
 * The default transport: POSTs `{ messages }` as JSON and reads the answer as an AI SDK UI
 * message stream, so a route returning `result.toUIMessageStreamResponse()` works unchanged.
 *
 * @example
 * ```ts
 * const transport = createUIMessageStreamTransport({ api: "/api/chat" });
 * ```
 */
export function createUIMessageStreamTransport(
  options: UIMessageStreamTransportOptions,
): ChatTransport {
  return {
    async *send(messages: readonly ChatMessage[], { signal, traceparent }: ChatSendOptions) {
      const fetchFunction = options.fetch ?? globalThis.fetch.bind(globalThis);
      const body = await fetchStream(fetchFunction, options.api, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(traceparent === undefined ? {} : { traceparent }),
          ...resolve(options.headers),
        },
        body: JSON.stringify({ ...resolve(options.body), messages }),
        signal,
        ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      });
      yield* readUIMessageStream(body, signal, options.api);
    },
  };
}

/**
 * The parts of an AI SDK UI message stream body, up to `[DONE]`; a body that ends before a
 * `finish` (or `abort`) part is a dropped connection. `source` names the backend in errors.
 */
export async function* readUIMessageStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  source: string,
): AsyncGenerator<ChatStreamPart> {
  let ended = false;
  for await (const data of readEventData(body, signal)) {
    if (data === "[DONE]") return;
    const part = parseEventJson(data, source) as ChatStreamPart;
    if (typeof part !== "object" || part === null || typeof part.type !== "string") {
      throw new ChatError("protocol_error", `${source} sent a part without a type`);
    }
    if (part.type === "finish" || part.type === "abort") ended = true;
    yield part;
  }
  if (!ended) {
    throw new ChatError(
      "connection_dropped",
      "The connection dropped before the answer finished. Retry to ask again.",
    );
  }
}
