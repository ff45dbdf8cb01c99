// The chat's data model. Message parts use the Vercel AI SDK's UIMessage shapes, so that the
// messages a chat sends are the ones an AI SDK backend validates and converts unchanged.

export type ChatRole = "system" | "user" | "assistant";

/** What the chat is doing: the composer, the stop button and the error banner follow it. */
export type ChatStatus = "idle" | "submitted" | "streaming" | "error" | "stopped";

export type ToolCallState =
  | "input-streaming"
  | "input-available"
  | "output-available"
  | "output-error";

export interface TextPart {
  readonly type: "text";
  readonly text: string;
  readonly state?: "streaming" | "done";
}

export interface ReasoningPart {
  readonly type: "reasoning";
  readonly text: string;
  readonly state?: "streaming" | "done";
}

/** A tool call, in the AI SDK's `dynamic-tool` shape (the tool is named, not typed). */
export interface ToolCallPart {
  readonly type: "dynamic-tool";
  readonly toolCallId: string;
  readonly toolName: string;
  readonly state: ToolCallState;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly errorText?: string;
  readonly title?: string;
}

export interface SourceUrlPart {
  readonly type: "source-url";
  readonly sourceId: string;
  readonly url: string;
  readonly title?: string;
}

export interface FilePart {
  readonly type: "file";
  readonly mediaType: string;
  readonly url: string;
  readonly filename?: string;
}

export interface DataPart {
  readonly type: `data-${string}`;
  readonly id?: string;
  readonly data: unknown;
}

export interface StepStartPart {
  readonly type: "step-start";
}

export type ChatMessagePart =
  | TextPart
  | ReasoningPart
  | ToolCallPart
  | SourceUrlPart
  | FilePart
  | DataPart
  | StepStartPart;

export interface ChatMessage {
  readonly id: string;
  readonly role: ChatRole;
  readonly parts: readonly ChatMessagePart[];
  readonly metadata?: unknown;
}

/** Tokens a model call used, named as the AI SDK names them. */
export interface ChatUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  readonly reasoningTokens?: number;
  readonly cachedInputTokens?: number;
}

/**
 * One part of an AI SDK UI message stream (`x-vercel-ai-ui-message-stream: v1`), the
 * currency every transport speaks.
 */
export type ChatStreamPart =
  | { readonly type: "start"; readonly messageId?: string; readonly messageMetadata?: unknown }
  | { readonly type: "start-step" }
  | { readonly type: "finish-step" }
  | { readonly type: "text-start"; readonly id: string }
  | { readonly type: "text-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "text-end"; readonly id: string }
  | { readonly type: "reasoning-start"; readonly id: string }
  | { readonly type: "reasoning-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "reasoning-end"; readonly id: string }
  | {
      readonly type: "tool-input-start";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly title?: string;
    }
  | {
      readonly type: "tool-input-delta";
      readonly toolCallId: string;
      readonly inputTextDelta: string;
    }
  | {
      readonly type: "tool-input-available";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
      readonly title?: string;
    }
  | {
      readonly type: "tool-input-error";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
      readonly errorText: string;
    }
  | {
      readonly type: "tool-output-available";
      readonly toolCallId: string;
      readonly output: unknown;
      readonly preliminary?: boolean;
    }
  | { readonly type: "tool-output-error"; readonly toolCallId: string; readonly errorText: string }
  | {
      readonly type: "source-url";
      readonly sourceId: string;
      readonly url: string;
      readonly title?: string;
    }
  | { readonly type: "file"; readonly url: string; readonly mediaType: string }
  | {
      readonly type: `data-${string}`;
      readonly id?: string;
      readonly data: unknown;
      readonly transient?: boolean;
    }
  | { readonly type: "message-metadata"; readonly messageMetadata: unknown }
  | { readonly type: "finish"; readonly finishReason?: string; readonly messageMetadata?: unknown }
  | { readonly type: "error"; readonly errorText: string }
  | { readonly type: "abort"; readonly reason?: string };

export interface ChatSendOptions {
  /** Aborted when the user stops the answer: the transport must end its request. */
  readonly signal: AbortSignal;
  /**
   * The W3C `traceparent` of this turn's trace, when it is traced: a transport sends it with
   * its request, so the backend's spans join the browser's turn.
   */
  readonly traceparent?: string | undefined;
}

/**
 * Where answers come from: given the conversation, the parts of the assistant's next message.
 * Ending the iteration without a `finish` part counts as a dropped connection.
 */
export interface ChatTransport {
  send(messages: readonly ChatMessage[], options: ChatSendOptions): AsyncIterable<ChatStreamPart>;
}

/** One traced turn: the store reports the model calls and the end. */
export interface ChatTurnTrace {
  /** The turn's W3C traceparent, once its span exists (the tracing SDK may still be loading). */
  traceparent?(): Promise<string | undefined>;
  llm(usage: ChatUsage, model?: string): void;
  end(output: { readonly message: ChatMessage | undefined }): void;
  fail(error: unknown): void;
}

/** What a turn starts from: the conversation sent to the model. */
export interface ChatTurnInput {
  readonly messages: readonly ChatMessage[];
}

/** Plugged in by the provider to trace each turn; faults in it never reach the chat. */
export interface ChatTracer {
  startTurn(input: ChatTurnInput): ChatTurnTrace;
}
