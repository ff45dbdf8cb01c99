import type {
  CoreToServiceMessage,
  OpenAIChatMessage,
  ServiceToCoreMessage,
  TurnErrorEvent,
  TurnEvent,
} from "../../agents/protocol.js";
import { randomHex } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import {
  type AgentStreamPart,
  type AgentTurnError,
  newAgentMessageId,
} from "../../core/wire/agent-conversations.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { UnsealError } from "../../sandbox/runner/secrets/seal.js";
import type { ConversationStore } from "./conversation-store.js";
import { PartQueue } from "./part-queue.js";
import { ReplyParts } from "./reply-parts.js";
import { runCommand } from "./run-command.js";
import type { SecretScrub } from "./secret-scrub.js";
import { type SpanSink, TurnTrace } from "./turn-trace.js";

/** What a turn needs of the agent's running core (S1's AgentConnection). */
export interface TurnConnection {
  readonly sandboxId: string;
  send(message: ServiceToCoreMessage): void;
  subscribe(listener: (event: CoreToServiceMessage) => void): () => void;
}

export interface AgentTurnOptions {
  readonly projectId: string;
  readonly agent: {
    readonly id: string;
    readonly name: string;
    readonly tags: Readonly<Record<string, string>>;
  };
  readonly conversationId: string;
  /** The user's message, as the trace's input. */
  readonly content: string;
  /** The history to send, the user's message last. */
  readonly history: OpenAIChatMessage[];
  /** The agent's ready core when the turn's time comes; undefined once it is not ready. */
  readonly connect: () => TurnConnection | undefined;
  readonly conversations: ConversationStore;
  readonly runner: SandboxRunner | undefined;
  readonly spans: SpanSink;
  /** Keeps the agent's secret values out of the reply, the stored message and the trace. */
  readonly scrub: SecretScrub;
  /** How long the core has to confirm an abort before the turn ends without it. */
  readonly abortGraceMs: number;
  /** Called once, when the turn has ended and its message is stored. */
  readonly onEnd: () => void;
}

/**
 * One turn of a conversation, run on its own from the moment it is made: the history goes to
 * the core, the core's events become the reply's parts (read through {@link AgentTurn.parts}),
 * `run_command` calls run in the agent's sandbox, and at the end the assistant message and the
 * trace are stored. A turn stopped or failed midway stores what it showed, marked with why.
 */
export class AgentTurn {
  readonly turnId = `turn_${randomHex(12)}`;
  readonly messageId = newAgentMessageId();
  readonly parts: PartQueue<AgentStreamPart>;
  readonly #options: AgentTurnOptions;
  readonly #reply: ReplyParts;
  readonly #trace: TurnTrace;
  /** Stops a running `run_command`. */
  readonly #tools = new AbortController();
  #unsubscribe: () => void = () => undefined;
  /** The core running the turn, once it has been sent. */
  #connection: TurnConnection | undefined;
  /** Core events are handled one after the other: a `run_command` finishes before what follows. */
  #events: Promise<void> = Promise.resolve();
  #stopping = false;
  #ended = false;

  constructor(options: AgentTurnOptions) {
    this.#options = options;
    this.parts = new PartQueue(() => this.abort());
    this.#reply = new ReplyParts(this.messageId, (part) => this.parts.push(part), options.scrub);
    this.#trace = new TurnTrace(options.spans, {
      projectId: options.projectId,
      agentId: options.agent.id,
      agentName: options.agent.name,
      conversationId: options.conversationId,
      tags: options.agent.tags,
      input: options.content,
    });
  }

  get traceId(): string {
    return this.#trace.cairnTraceId;
  }

  /**
   * Starts the reply at once, and sends the turn to the core when `ready` settles: the core runs
   * one turn at a time, so the turns of an agent's other conversations go first. When `ready`
   * fails (the secrets to scrub could not be read), the turn fails without reaching the core.
   */
  start(ready: Promise<void>): void {
    const metadata = { conversationId: this.#options.conversationId, traceId: this.traceId };
    this.#reply.start(this.messageId, metadata);
    void ready.then(
      () => this.#send(),
      (error: unknown) => {
        log.error(`agent ${this.#options.agent.id}: turn ${this.turnId} could not start`, error);
        // An UnsealError names the secret that does not open (never its value).
        this.#fail(
          error instanceof UnsealError
            ? { kind: "other", message: error.message }
            : {
                kind: "transient",
                message: "the service could not read the agent's secrets; ask again shortly",
              },
        );
      },
    );
  }

  #send(): void {
    if (this.#ended) return;
    const connection = this.#options.connect();
    if (connection === undefined) {
      this.#fail(restarting);
      return;
    }
    this.#connection = connection;
    this.#unsubscribe = connection.subscribe((event) => {
      if (!("turnId" in event)) return;
      if (event.turnId !== this.turnId && !(event.turnId === "*" && event.type === "turn-error")) {
        return;
      }
      this.#events = this.#events
        .then(() => this.#handle(event))
        .catch((error: unknown) => {
          log.error(`agent ${this.#options.agent.id}: turn ${this.turnId} failed`, error);
          this.#fail({
            kind: "other",
            message: "the service failed while answering; the log says why",
          });
        });
    });
    try {
      connection.send({ type: "turn", turnId: this.turnId, messages: this.#options.history });
    } catch (error) {
      log.warn(`agent ${this.#options.agent.id}: the turn could not be sent to its process`, error);
      this.#fail(restarting);
    }
  }

  /** Stops the turn (the client left, or `…/stop`): the core is told, a command is killed. */
  abort(): void {
    if (this.#ended || this.#stopping) return;
    this.#stopping = true;
    this.#tools.abort();
    const connection = this.#connection;
    // Still waiting for its turn: nothing runs it yet.
    if (connection === undefined) {
      this.#fail(stopped);
      return;
    }
    try {
      connection.send({ type: "abort", turnId: this.turnId });
    } catch {
      // The process is gone: nothing runs the turn anymore.
    }
    // The core answers an abort at once; a core that does not is not waited for.
    const timer = setTimeout(() => this.#fail(stopped), this.#options.abortGraceMs);
    timer.unref();
  }

  async #handle(received: TurnEvent): Promise<void> {
    if (this.#ended) return;
    // Deltas are scrubbed as a stream (a secret may be split across them); the rest whole.
    const event = received.type.endsWith("-delta") ? received : this.#options.scrub.value(received);
    switch (event.type) {
      case "text-delta":
        this.#reply.text(event.delta);
        return;
      case "reasoning-delta":
        this.#reply.reasoning(event.delta);
        return;
      case "llm":
        this.#trace.llm(event);
        this.#reply.modelCall(event);
        return;
      case "tool-call":
        this.#trace.toolStarted(event.toolCallId, event.toolName, event.input);
        this.#reply.toolCall(event.toolCallId, event.toolName, event.input);
        if (event.runsOn === "service")
          await this.#runOnService(event.toolCallId, event.toolName, event.input);
        return;
      case "tool-output":
        this.#trace.toolEnded(event.toolCallId, {
          output: event.output,
          isError: event.isError,
          endedAt: event.endedAt,
        });
        this.#reply.toolOutput(event.toolCallId, event.output, event.isError);
        return;
      case "finish":
        this.#finish(event.messages);
        return;
      case "turn-error":
        this.#fail(this.#stopping ? stopped : errorOf(event));
        return;
    }
  }

  async #runOnService(toolCallId: string, toolName: string, input: unknown): Promise<void> {
    const { runner, projectId } = this.#options;
    const connection = this.#connection as TurnConnection;
    const exec = this.#trace.execContext(toolCallId);
    const result =
      toolName !== "run_command"
        ? { output: `${toolName} does not run on the service`, isError: true }
        : runner === undefined
          ? { output: "this service runs no sandboxes, so commands cannot run", isError: true }
          : await runCommand({
              runner,
              projectId,
              sandboxId: connection.sandboxId,
              input,
              traceparent: exec?.traceparent,
              signal: this.#tools.signal,
            });
    const output = this.#options.scrub.value(result.output);
    const report = "exec" in result ? result.exec : undefined;
    this.#trace.toolEnded(
      toolCallId,
      { output, isError: result.isError },
      report === undefined || exec === undefined ? undefined : { spanId: exec.spanId, report },
    );
    if (this.#ended) return;
    this.#reply.toolOutput(toolCallId, output, result.isError);
    if (this.#stopping) return;
    try {
      connection.send({
        type: "tool-result",
        turnId: this.turnId,
        toolCallId,
        output,
        isError: result.isError,
      });
    } catch {
      // The process is gone; its turn-error ends the turn.
    }
  }

  #finish(chat: OpenAIChatMessage[]): void {
    if (this.#ended) return;
    this.#reply.finish({ conversationId: this.#options.conversationId, traceId: this.traceId });
    this.#end(chat, undefined);
  }

  #fail(error: AgentTurnError): void {
    if (this.#ended) return;
    this.#reply.fail(error);
    // What streamed goes into the history as text; never tool calls without their results.
    const text = this.#reply.replyText;
    const chat: OpenAIChatMessage[] = text === "" ? [] : [{ role: "assistant", content: text }];
    this.#end(chat, error.message);
  }

  #end(chat: OpenAIChatMessage[], error: string | undefined): void {
    this.#ended = true;
    this.#unsubscribe();
    this.#tools.abort();
    try {
      this.#options.conversations.append(this.#options.conversationId, {
        id: this.messageId,
        role: "assistant",
        parts: this.#reply.parts(),
        chat,
        traceId: this.traceId,
      });
    } catch (failure) {
      log.error(`agent ${this.#options.agent.id}: the reply could not be stored`, failure);
    }
    this.#trace.end({ output: this.#reply.replyText, error });
    this.parts.end();
    this.#options.onEnd();
  }
}

const stopped: AgentTurnError = { kind: "aborted", message: "the turn was stopped" };
const restarting: AgentTurnError = {
  kind: "transient",
  message:
    "the agent's process stopped before the turn could start; it is being restarted, so ask again shortly",
};

/** The core's turn-error as the reply says it (its message names the model endpoint's answer). */
function errorOf(event: TurnErrorEvent): AgentTurnError {
  return {
    kind: event.kind,
    message: event.message,
    ...(event.status === undefined ? {} : { status: event.status }),
  };
}
