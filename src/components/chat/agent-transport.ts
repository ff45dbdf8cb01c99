import { ChatError } from "./chat-error.js";
import { fetchStreamResponse } from "./sse.js";
import type { ChatMessage, ChatTransport } from "./types.js";
import { readUIMessageStream } from "./ui-message-stream-transport.js";

/** The header of an agent's reply that names its conversation. */
const conversationIdHeader = "x-cairn-conversation-id";

export interface AgentTransportOptions {
  /**
   * A web channel's token (`cairn agent channels add <agent> web`, or
   * `agents.channels.add(id, "web")` on your server), or a function that returns one: it is
   * called for each message, so a page can fetch a new token when the last one expires. Never
   * the project's API key.
   */
  readonly token: string | (() => string | Promise<string>);
  /** The Cairn service's origin, e.g. `https://cairn.example.com` (default: the page's own). */
  readonly endpoint?: string | undefined;
  /** Continue this conversation (`conv_…`); without it, the first message starts a new one. */
  readonly conversationId?: string | undefined;
  /** Called when the service names the conversation: keep it to continue after a reload. */
  readonly onConversationId?: ((conversationId: string) => void) | undefined;
  /** A fetch to use instead of the global one. */
  readonly fetch?: typeof fetch | undefined;
}

/** A transport that talks to a managed agent, and the conversation it continues. */
export interface AgentTransport extends ChatTransport {
  /** The conversation the next message continues; undefined before the first reply. */
  readonly conversationId: string | undefined;
}

/**
 * A transport to a managed agent of the Cairn service, for `<CairnChat transport={…} />`. The
 * service keeps the conversation, so each turn sends only the last user message (its text and
 * files) and the conversation's id; the reply streams back as the agent's UI message stream:
 * text, reasoning, and each tool call with its input and output. A chat cleared of its messages
 * starts a new conversation.
 *
 * @example
 * ```tsx
 * // The token comes from your server: agents.channels.add(agentId, "web").
 * <CairnChat transport={agentTransport("agt_…", { endpoint: "https://cairn.example.com", token })} />
 * ```
 */
export function agentTransport(agentId: string, options: AgentTransportOptions): AgentTransport {
  const url = `${(options.endpoint ?? "").replace(/\/+$/, "")}/v1/agents/${encodeURIComponent(agentId)}/messages`;
  let conversationId = options.conversationId;
  let replied = false;
  const learn = (id: string | null | undefined) => {
    if (typeof id !== "string" || id === "" || id === conversationId) return;
    conversationId = id;
    options.onConversationId?.(id);
  };
  return {
    get conversationId() {
      return conversationId;
    },
    async *send(messages, { signal, traceparent }) {
      const last = messages.findLast((message) => message.role === "user");
      if (last === undefined) {
        throw new ChatError("protocol_error", "there is no user message to send to the agent");
      }
      // A chat whose earlier replies were cleared away is a new conversation.
      if (replied && !messages.some((message) => message.role === "assistant")) {
        conversationId = undefined;
      }
      const token = typeof options.token === "function" ? await options.token() : options.token;
      const response = await fetchStreamResponse(
        options.fetch ?? globalThis.fetch.bind(globalThis),
        url,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            authorization: `Bearer ${token}`,
            ...(traceparent === undefined ? {} : { traceparent }),
          },
          body: JSON.stringify(messageBody(last, conversationId)),
          signal,
        },
      );
      replied = true;
      learn(response.headers.get(conversationIdHeader));
      for await (const part of readUIMessageStream(response.body, signal, url)) {
        if (part.type === "start") {
          learn((part.messageMetadata as { conversationId?: string } | undefined)?.conversationId);
        }
        yield part;
      }
    },
  };
}

/** `POST …/messages`'s body: the message's text and files, and the conversation it continues. */
function messageBody(message: ChatMessage, conversationId: string | undefined) {
  const content = message.parts
    .flatMap((part) => (part.type === "text" ? [part.text] : []))
    .join("\n");
  const attachments = message.parts.flatMap((part) =>
    part.type === "file"
      ? [{ name: part.filename ?? "attachment", mediaType: part.mediaType, url: part.url }]
      : [],
  );
  return {
    content,
    ...(conversationId === undefined ? {} : { conversationId }),
    ...(attachments.length === 0 ? {} : { attachments }),
  };
}
