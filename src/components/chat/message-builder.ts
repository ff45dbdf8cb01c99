import { ChatError } from "./chat-error.js";
import type {
  ChatMessage,
  ChatMessagePart,
  ChatStreamPart,
  ChatUsage,
  ToolCallPart,
} from "./types.js";

/** What a part means beyond the message's content, for the store to act on. */
export type PartOutcome =
  | { readonly kind: "none" }
  | { readonly kind: "usage"; readonly usage: ChatUsage; readonly model: string | undefined }
  | {
      readonly kind: "finish";
      /** The usage the finish part's metadata carried, if any. */
      readonly usage: ChatUsage | undefined;
      readonly model: string | undefined;
    }
  | { readonly kind: "abort" };

const none: PartOutcome = { kind: "none" };

/**
 * The assistant message being streamed, built in place part by part: the store publishes a
 * copy of it at most once a frame, so thousands of parts cost one render.
 */
export class MessageBuilder {
  id: string;
  metadata: unknown;
  readonly parts: ChatMessagePart[] = [];
  readonly #blocks = new Map<string, number>();
  readonly #tools = new Map<string, number>();
  readonly #toolInputText = new Map<string, string>();
  readonly #data = new Map<string, number>();
  /** True when the parts changed since the last {@link MessageBuilder.snapshot}. */
  changed = true;

  constructor(id: string) {
    this.id = id;
  }

  snapshot(): ChatMessage {
    this.changed = false;
    return {
      id: this.id,
      role: "assistant",
      parts: [...this.parts],
      ...(this.metadata === undefined ? {} : { metadata: this.metadata }),
    };
  }

  /** Applies one stream part; an `error` part throws the ChatError it carries. */
  apply(part: ChatStreamPart): PartOutcome {
    this.changed = true;
    switch (part.type) {
      case "start":
        return this.#metadata(part.messageMetadata);
      case "start-step":
        this.parts.push({ type: "step-start" });
        return none;
      case "finish-step":
        this.#blocks.clear();
        return none;
      case "text-start":
      case "reasoning-start":
        this.#block(part.type === "text-start" ? "text" : "reasoning", part.id);
        return none;
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning";
        const index = this.#block(kind, part.id, false);
        const current = this.parts[index] as { text: string };
        this.parts[index] = { type: kind, text: current.text + part.delta, state: "streaming" };
        return none;
      }
      case "text-end":
      case "reasoning-end": {
        const kind = part.type === "text-end" ? "text" : "reasoning";
        const index = this.#block(kind, part.id, false);
        const current = this.parts[index] as { text: string };
        this.parts[index] = { type: kind, text: current.text, state: "done" };
        return none;
      }
      case "tool-input-start":
        this.#tool(part.toolCallId, {
          toolName: part.toolName,
          state: "input-streaming",
          ...(part.title === undefined ? {} : { title: part.title }),
        });
        this.#toolInputText.set(part.toolCallId, "");
        return none;
      case "tool-input-delta": {
        const text = (this.#toolInputText.get(part.toolCallId) ?? "") + part.inputTextDelta;
        this.#toolInputText.set(part.toolCallId, text);
        this.#tool(part.toolCallId, { input: parsePartialJson(text) });
        return none;
      }
      case "tool-input-available":
        this.#toolInputText.delete(part.toolCallId);
        this.#tool(part.toolCallId, {
          toolName: part.toolName,
          state: "input-available",
          input: part.input,
          ...(part.title === undefined ? {} : { title: part.title }),
        });
        return none;
      case "tool-input-error":
        this.#tool(part.toolCallId, {
          toolName: part.toolName,
          state: "output-error",
          input: part.input,
          errorText: part.errorText,
        });
        return none;
      case "tool-output-available":
        this.#tool(part.toolCallId, { state: "output-available", output: part.output });
        return none;
      case "tool-output-error":
        this.#tool(part.toolCallId, { state: "output-error", errorText: part.errorText });
        return none;
      case "source-url":
        this.parts.push({
          type: "source-url",
          sourceId: part.sourceId,
          url: part.url,
          ...(part.title === undefined ? {} : { title: part.title }),
        });
        return none;
      case "file":
        this.parts.push({ type: "file", url: part.url, mediaType: part.mediaType });
        return none;
      case "message-metadata":
        return this.#metadata(part.messageMetadata);
      case "finish": {
        const outcome = this.#metadata(part.messageMetadata);
        this.#endBlocks();
        return outcome.kind === "usage"
          ? { kind: "finish", usage: outcome.usage, model: outcome.model }
          : { kind: "finish", usage: undefined, model: undefined };
      }
      case "abort":
        this.#endBlocks();
        return { kind: "abort" };
      case "error":
        this.#endBlocks();
        throw new ChatError("stream_error", part.errorText);
      default:
        return this.#dataPart(part);
    }
  }

  /** Marks text still streaming as done: the answer ended (or was stopped). */
  #endBlocks(): void {
    for (const [index, part] of this.parts.entries()) {
      if ((part.type === "text" || part.type === "reasoning") && part.state === "streaming") {
        this.parts[index] = { ...part, state: "done" };
      }
    }
  }

  end(): void {
    this.#endBlocks();
    this.changed = true;
  }

  #block(kind: "text" | "reasoning", id: string, fresh = true): number {
    const key = `${kind}:${id}`;
    const known = this.#blocks.get(key);
    if (known !== undefined && !fresh) return known;
    this.parts.push({ type: kind, text: "", state: "streaming" });
    this.#blocks.set(key, this.parts.length - 1);
    return this.parts.length - 1;
  }

  #tool(toolCallId: string, change: Partial<Omit<ToolCallPart, "type" | "toolCallId">>): void {
    const index = this.#tools.get(toolCallId);
    if (index === undefined) {
      this.parts.push({
        type: "dynamic-tool",
        toolCallId,
        toolName: "tool",
        state: "input-streaming",
        ...change,
      } as ToolCallPart);
      this.#tools.set(toolCallId, this.parts.length - 1);
      return;
    }
    this.parts[index] = { ...(this.parts[index] as ToolCallPart), ...change } as ToolCallPart;
  }

  #metadata(metadata: unknown): PartOutcome {
    if (metadata === undefined || metadata === null) return none;
    this.metadata =
      typeof metadata === "object" && typeof this.metadata === "object" && this.metadata !== null
        ? { ...this.metadata, ...metadata }
        : metadata;
    const usage = (metadata as { usage?: unknown }).usage;
    if (typeof usage !== "object" || usage === null) return none;
    const model = (metadata as { model?: unknown }).model;
    return {
      kind: "usage",
      usage: usage as ChatUsage,
      model: typeof model === "string" ? model : undefined,
    };
  }

  #dataPart(part: ChatStreamPart): PartOutcome {
    if (!part.type.startsWith("data-") || !("data" in part)) return none;
    const data = part as {
      type: `data-${string}`;
      id?: string;
      data: unknown;
      transient?: boolean;
    };
    if (data.transient === true) return none;
    const next = {
      type: data.type,
      data: data.data,
      ...(data.id === undefined ? {} : { id: data.id }),
    };
    const key = data.id === undefined ? undefined : `${data.type}:${data.id}`;
    const index = key === undefined ? undefined : this.#data.get(key);
    if (index !== undefined) {
      this.parts[index] = next;
      return none;
    }
    this.parts.push(next);
    if (key !== undefined) this.#data.set(key, this.parts.length - 1);
    return none;
  }
}

const closers = ["", '"', "}", '"}', "]}", '"]}', "}}", '"}}', "]", '"]'];

/** The input streamed so far, parsed where closing it makes JSON; else the raw text. */
export function parsePartialJson(text: string): unknown {
  for (const closer of closers) {
    try {
      return JSON.parse(text + closer);
    } catch {
      // Try the next way to close it.
    }
  }
  return text;
}
