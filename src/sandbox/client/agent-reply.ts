import { AgentTurnError } from "../../core/errors/agent-turn-error.js";
import { ApiRequestError } from "../../core/errors/api-request-error.js";
import { readServerSentEvents } from "../../core/http/sse.js";
import {
  type AgentStreamPart,
  conversationIdHeader,
  type AgentTurnError as TurnErrorData,
  turnErrorPartType,
} from "../../core/wire/agent-conversations.js";

/** A tool call of a reply, with its outcome once it has one. */
export interface AgentToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly output?: unknown;
  /** Why the tool failed, when it did. */
  readonly errorText?: string;
}

/** A whole reply, read to its end. */
export interface AgentReplyResult {
  readonly conversationId: string;
  /** The stored message's id (`msg_…`). */
  readonly messageId: string | undefined;
  /** The turn's trace (`tr_…`). */
  readonly traceId: string | undefined;
  /** The reply's text: every text delta, joined. */
  readonly text: string;
  readonly toolCalls: readonly AgentToolCall[];
}

/**
 * An agent's reply as it streams: iterate it for the parts of the AI SDK UI message stream
 * (`text-delta`, `tool-input-available`, `tool-output-available`, …, `finish`), or await
 * {@link AgentReply.text} or {@link AgentReply.result} for the whole. It can be read once.
 *
 * A turn that fails (the model refused, the agent restarted) throws {@link AgentTurnError} at the
 * point the stream says so, with its `kind`; one whose connection drops throws it with kind
 * `transient`. Aborting the `signal` given to `send()` stops the turn on the service too, and
 * throws the signal's reason. Leaving the iteration early (`break`) also stops the turn.
 */
export class AgentReply implements AsyncIterable<AgentStreamPart> {
  /** The conversation this turn belongs to: send again with it to continue. */
  conversationId: string;
  private messageIdSeen: string | undefined;
  private traceIdSeen: string | undefined;
  private read = false;

  /** @internal Made by `Agents.send()`. */
  constructor(
    private readonly response: Response,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.conversationId = response.headers.get(conversationIdHeader) ?? "";
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentStreamPart> {
    if (this.read) {
      throw new TypeError("this reply was read already: a reply streams once");
    }
    this.read = true;
    return this.parts();
  }

  /** Reads the reply to its end: its text, tool calls and ids. */
  async result(): Promise<AgentReplyResult> {
    let text = "";
    const toolCalls = new Map<string, AgentToolCall>();
    for await (const part of this) {
      if (part.type === "text-delta") text += part.delta;
      else if (part.type === "tool-input-available") {
        const { toolCallId, toolName, input } = part;
        toolCalls.set(toolCallId, { toolCallId, toolName, input });
      } else if (part.type === "tool-output-available" || part.type === "tool-output-error") {
        const call = toolCalls.get(part.toolCallId);
        if (call === undefined) continue;
        toolCalls.set(
          part.toolCallId,
          part.type === "tool-output-available"
            ? { ...call, output: part.output }
            : { ...call, errorText: part.errorText },
        );
      }
    }
    return {
      conversationId: this.conversationId,
      messageId: this.messageIdSeen,
      traceId: this.traceIdSeen,
      text,
      toolCalls: [...toolCalls.values()],
    };
  }

  /** Reads the reply to its end and resolves with its text. */
  async text(): Promise<string> {
    return (await this.result()).text;
  }

  private async *parts(): AsyncGenerator<AgentStreamPart> {
    const body = this.response.body;
    let why: TurnErrorData | undefined;
    let finished = false;
    try {
      if (body === null) throw this.dropped();
      for await (const event of readServerSentEvents(body)) {
        if (event.data === "[DONE]") break;
        const part = this.parse(event.data);
        if (part.type === "start") {
          this.messageIdSeen = part.messageId;
          this.traceIdSeen = part.messageMetadata?.traceId;
          if (this.conversationId === "") this.conversationId = part.messageMetadata.conversationId;
        } else if (part.type === turnErrorPartType) {
          why = part.data;
        } else if (part.type === "error" || part.type === "abort") {
          throw this.failed(part, why);
        } else if (part.type === "finish") {
          finished = true;
        }
        yield part;
      }
    } catch (error) {
      if (this.signal?.aborted === true) throw this.signal.reason;
      if (AgentTurnError.isInstance(error) || ApiRequestError.isInstance(error)) throw error;
      if (error instanceof RangeError) throw this.unreadable(error.message);
      throw this.dropped(error);
    } finally {
      // A reader that stops early closes the request: the service stops the turn.
      await body?.cancel().catch(() => {});
    }
    if (!finished) throw this.dropped();
  }

  private parse(data: string): AgentStreamPart {
    let part: unknown;
    try {
      part = JSON.parse(data);
    } catch {
      throw this.unreadable(`an event that is not JSON: ${data.slice(0, 80)}`);
    }
    if (
      typeof part !== "object" ||
      part === null ||
      typeof (part as { type?: unknown }).type !== "string"
    ) {
      throw this.unreadable("a part without a type");
    }
    return part as AgentStreamPart;
  }

  private failed(
    part: Extract<AgentStreamPart, { type: "error" | "abort" }>,
    why: TurnErrorData | undefined,
  ): AgentTurnError {
    const aborted = part.type === "abort";
    return new AgentTurnError(
      why?.message ??
        (aborted ? "the turn was stopped" : (part as { errorText: string }).errorText),
      {
        kind: why?.kind ?? (aborted ? "aborted" : "other"),
        status: why?.status,
        conversationId: this.conversationId,
      },
    );
  }

  private dropped(cause?: unknown): AgentTurnError {
    return new AgentTurnError(
      "the connection to the Cairn service dropped before the reply finished; send the message again",
      { kind: "transient", conversationId: this.conversationId, cause },
    );
  }

  private unreadable(why: string): ApiRequestError {
    return new ApiRequestError(
      "invalid_response",
      `the agent's reply is not a stream this client can read (${why}); are the service and the client the same version?`,
      this.response.status,
    );
  }
}
