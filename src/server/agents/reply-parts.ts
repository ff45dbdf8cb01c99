import type { LlmEvent } from "../../agents/protocol.js";
import { MessageBuilder } from "../../components/chat/message-builder.js";
import type { ChatStreamPart } from "../../components/chat/types.js";
import {
  type AgentMessagePart,
  type AgentReplyMetadata,
  type AgentStreamPart,
  type AgentTurnError,
  turnErrorPartType,
} from "../../core/wire/agent-conversations.js";
import type { SecretScrub, TextScrub } from "./secret-scrub.js";

/**
 * A turn's reply as AI SDK UI message stream parts, made from the core's events: text and
 * reasoning in blocks, one step per model call (with the tools it called), then `finish`, or
 * the turn's error. Every part also goes into the message being built, the one CairnChat builds
 * from the same parts: what is stored is what was shown.
 */
export class ReplyParts {
  readonly #emit: (part: AgentStreamPart) => void;
  readonly #message: MessageBuilder;
  readonly #scrub: SecretScrub;
  #blockCount = 0;
  #open: { kind: "text" | "reasoning"; id: string; scrub: TextScrub } | undefined;
  #text = "";
  /** The step's model call has ended (its `llm` event came): what streams next is another. */
  #modelDone = false;
  #stepOpen = false;
  #ended = false;

  /** Text deltas go out through `scrub`, block by block (a secret split across deltas too). */
  constructor(messageId: string, emit: (part: AgentStreamPart) => void, scrub: SecretScrub) {
    this.#message = new MessageBuilder(messageId);
    this.#emit = emit;
    this.#scrub = scrub;
  }

  /** The reply's text so far: every text delta sent, joined. */
  get replyText(): string {
    return this.#text;
  }

  /** The assistant message's parts so far (text still streaming marked done). */
  parts(): AgentMessagePart[] {
    this.#message.end();
    return this.#message.snapshot().parts as AgentMessagePart[];
  }

  start(messageId: string, metadata: AgentReplyMetadata): void {
    this.#send({ type: "start", messageId, messageMetadata: metadata });
    this.#startStep();
  }

  text(delta: string): void {
    this.#delta("text", delta);
  }

  reasoning(delta: string): void {
    this.#delta("reasoning", delta);
  }

  /** A model call ended: its text is complete; the tools it called belong to its step. */
  modelCall(_event: LlmEvent): void {
    if (this.#modelDone) this.#nextStep();
    this.#closeBlock();
    this.#modelDone = true;
  }

  toolCall(toolCallId: string, toolName: string, input: unknown): void {
    this.#closeBlock();
    this.#send({ type: "tool-input-available", toolCallId, toolName, input });
  }

  toolOutput(toolCallId: string, output: unknown, isError: boolean): void {
    this.#send(
      isError
        ? { type: "tool-output-error", toolCallId, errorText: errorTextOf(output) }
        : { type: "tool-output-available", toolCallId, output },
    );
  }

  finish(metadata: AgentReplyMetadata): void {
    this.#closeBlock();
    this.#endStep();
    this.#send({ type: "finish", messageMetadata: metadata });
    this.#ended = true;
  }

  /** Ends the reply early: why (kept in the message), then `error`, or `abort` when stopped. */
  fail(error: AgentTurnError): void {
    this.#closeBlock();
    this.#send({ type: turnErrorPartType, data: error });
    this.#send(
      error.kind === "aborted" ? { type: "abort" } : { type: "error", errorText: error.message },
    );
    this.#ended = true;
  }

  #delta(kind: "text" | "reasoning", delta: string): void {
    if (this.#modelDone) this.#nextStep();
    if (this.#open?.kind !== kind) {
      this.#closeBlock();
      this.#blockCount++;
      this.#open = { kind, id: `${kind}-${this.#blockCount}`, scrub: this.#scrub.stream() };
      this.#send({ type: `${kind}-start`, id: this.#open.id });
    }
    this.#sendDelta(this.#open.scrub.write(delta));
  }

  #sendDelta(delta: string): void {
    const open = this.#open;
    if (open === undefined || delta === "") return;
    if (open.kind === "text" && !this.#ended) this.#text += delta;
    this.#send({ type: `${open.kind}-delta`, id: open.id, delta });
  }

  #closeBlock(): void {
    if (this.#open === undefined) return;
    this.#sendDelta(this.#open.scrub.end());
    this.#send({ type: `${this.#open.kind}-end`, id: this.#open.id });
    this.#open = undefined;
  }

  #nextStep(): void {
    this.#closeBlock();
    this.#endStep();
    this.#startStep();
  }

  #startStep(): void {
    this.#send({ type: "start-step" });
    this.#stepOpen = true;
    this.#modelDone = false;
  }

  #endStep(): void {
    if (!this.#stepOpen) return;
    this.#send({ type: "finish-step" });
    this.#stepOpen = false;
  }

  #send(part: AgentStreamPart): void {
    if (this.#ended) return;
    // The builder throws on `error` parts (CairnChat shows them apart): the message keeps the
    // data part that says why.
    if (part.type !== "error") this.#message.apply(part as ChatStreamPart);
    this.#emit(part);
  }
}

/** A tool's error output as the text of a `tool-output-error` part. */
function errorTextOf(output: unknown): string {
  if (typeof output === "string") return output;
  const message = (output as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : JSON.stringify(output ?? null);
}
