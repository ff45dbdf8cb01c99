import type { OpenAIChatMessage, OpenAIContentPart } from "../../agents/protocol.js";
import {
  type AgentAttachment,
  type AgentMessagePart,
  type AgentStreamPart,
  isConversationId,
} from "../../core/wire/agent-conversations.js";
import type { ScrubPattern } from "../../sandbox/runner/egress/scrub.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { ApiError } from "../http/api-error.js";
import { AgentTurn, type TurnConnection } from "./agent-turn.js";
import {
  type ConversationChannel,
  type ConversationOrigin,
  type ConversationStore,
  conversationTitle,
} from "./conversation-store.js";
import { SecretScrub } from "./secret-scrub.js";
import type { AgentStore, StoredAgent } from "./store.js";
import type { SpanSink } from "./turn-trace.js";

/** The turns of agents' conversations, as the channels (and the messages route) start them. */
export interface AgentTurns {
  /**
   * Runs one turn; yields UI message stream parts; throws ApiError 409/404 as the route does.
   * With a channel, a new conversation is started on it (without a thread: a thread of its own)
   * and `conversationId` must be one started on it, else 404 as for an unknown one.
   */
  send(input: {
    projectId: string;
    agentId: string;
    conversationId?: string;
    content: string;
    channel?: ConversationOrigin;
    signal?: AbortSignal;
  }): { conversationId: string; parts: AsyncIterable<AgentStreamPart> };
  /** The conversation of a channel thread, if one was started there. */
  conversationFor(
    projectId: string,
    agentId: string,
    channel: ConversationChannel,
  ): string | undefined;
}

export interface AgentTurnServiceOptions {
  readonly agents: Pick<AgentStore, "get">;
  readonly conversations: ConversationStore;
  /** The agent's running core, only while it is ready (S1's supervisor). */
  readonly connection: (projectId: string, agentId: string) => TurnConnection | undefined;
  readonly runner: SandboxRunner | undefined;
  readonly spans: SpanSink;
  /** The forms of the secrets a sandbox holds placeholders of, to keep out of replies. */
  readonly secretPatterns?: (
    sandboxId: string,
  ) => readonly ScrubPattern[] | Promise<readonly ScrubPattern[]>;
  /** How long the core has to confirm an abort before a turn ends without it. Default 5000 ms. */
  readonly abortGraceMs?: number;
}

/**
 * Starts turns, one at a time per conversation: checks the agent is ready and the
 * conversation is its own, stores the user's message, and runs an {@link AgentTurn}.
 */
export class AgentTurnService implements AgentTurns {
  /** The turn running in each conversation. */
  readonly #running = new Map<string, AgentTurn>();
  /** Settles when each agent's last turn has ended: its core runs one turn at a time. */
  readonly #agentTails = new Map<string, Promise<void>>();

  constructor(private readonly options: AgentTurnServiceOptions) {}

  send(input: Parameters<AgentTurns["send"]>[0] & { attachments?: readonly AgentAttachment[] }): {
    conversationId: string;
    parts: AsyncIterable<AgentStreamPart>;
  } {
    const { projectId, agentId } = input;
    const agent = this.options.agents.get(projectId, agentId);
    if (agent === undefined) {
      throw new ApiError("not_found", `this project has no agent ${agentId}`);
    }
    const connection =
      agent.state === "ready" ? this.options.connection(projectId, agentId) : undefined;
    if (connection === undefined) throw agentNotReadyError(agent);
    const { conversations } = this.options;
    let conversationId = input.conversationId;
    if (conversationId !== undefined) {
      // A channel reaches only its own conversations: another one is as unknown.
      if (
        !isConversationId(conversationId) ||
        conversations.get(projectId, agentId, conversationId, input.channel) === undefined
      ) {
        throw new ApiError(
          "not_found",
          `agent ${agent.name} has no conversation ${conversationId}; leave conversationId out to start one`,
        );
      }
      if (this.#running.has(conversationId)) {
        throw new ApiError(
          "conflict",
          `conversation ${conversationId} is answering a message already: one turn at a time; wait for its reply, or stop it with POST /v1/agents/${agentId}/conversations/${conversationId}/stop`,
        );
      }
    } else {
      conversationId = conversations.create(
        projectId,
        agentId,
        conversationTitle(input.content),
        input.channel,
      ).id;
      // A channel thread's conversation may be running a turn started by an earlier message.
      if (this.#running.has(conversationId)) {
        throw new ApiError(
          "conflict",
          `conversation ${conversationId} is answering a message already: one turn at a time`,
        );
      }
    }
    const attachments = input.attachments ?? [];
    conversations.append(conversationId, {
      role: "user",
      parts: userParts(input.content, attachments),
      chat: [userChat(input.content, attachments)],
    });
    const id = conversationId;
    let ended: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const previous = this.#agentTails.get(agentId) ?? Promise.resolve();
    const tail = previous.then(() => mine);
    this.#agentTails.set(agentId, tail);
    void tail.then(() => {
      if (this.#agentTails.get(agentId) === tail) this.#agentTails.delete(agentId);
    });
    // The secrets are read (from the shared database on PostgreSQL) before the turn reaches the
    // core, so nothing the core says is shown before they are scrubbed from it.
    const scrub = new SecretScrub([]);
    const secretsRead = (async () =>
      scrub.use((await this.options.secretPatterns?.(connection.sandboxId)) ?? []))();
    const turn = new AgentTurn({
      projectId,
      agent: { id: agent.id, name: agent.name, tags: agent.config.tags },
      conversationId: id,
      content: input.content,
      history: conversations.history(id),
      connect: () => this.options.connection(projectId, agentId),
      conversations,
      runner: this.options.runner,
      spans: this.options.spans,
      scrub,
      abortGraceMs: this.options.abortGraceMs ?? 5000,
      onEnd: () => {
        if (this.#running.get(id) === turn) this.#running.delete(id);
        ended();
      },
    });
    this.#running.set(id, turn);
    const { signal } = input;
    if (signal !== undefined) {
      if (signal.aborted) queueMicrotask(() => turn.abort());
      else signal.addEventListener("abort", () => turn.abort(), { once: true });
    }
    turn.start(Promise.all([previous, secretsRead]).then(() => undefined));
    return { conversationId: id, parts: turn.parts };
  }

  conversationFor(
    projectId: string,
    agentId: string,
    channel: ConversationChannel,
  ): string | undefined {
    return this.options.conversations.forChannel(projectId, agentId, channel);
  }

  /** Stops the conversation's running turn; false when none runs. */
  stop(conversationId: string): boolean {
    const turn = this.#running.get(conversationId);
    if (turn === undefined) return false;
    turn.abort();
    return true;
  }

  /** Stops every running turn (the service is closing). */
  close(): void {
    for (const turn of this.#running.values()) turn.abort();
  }
}

/** The user's message as shown: its text, and each attachment as a file part. */
function userParts(content: string, attachments: readonly AgentAttachment[]): AgentMessagePart[] {
  return [
    { type: "text", text: content },
    ...attachments.map(
      (file): AgentMessagePart => ({
        type: "file",
        mediaType: file.mediaType,
        url: file.url,
        filename: file.name,
      }),
    ),
  ];
}

/** The user's message as the model reads it: images as image parts, other files named. */
function userChat(content: string, attachments: readonly AgentAttachment[]): OpenAIChatMessage {
  if (attachments.length === 0) return { role: "user", content };
  const parts: OpenAIContentPart[] = [{ type: "text", text: content }];
  for (const file of attachments) {
    parts.push(
      file.mediaType.startsWith("image/")
        ? { type: "image_url", image_url: { url: file.url } }
        : { type: "text", text: `Attached file ${file.name} (${file.mediaType}): ${file.url}` },
    );
  }
  return { role: "user", content: parts };
}

/** 409 agent_not_ready: the agent takes no message now, said by its state and last error. */
export function agentNotReadyError(agent: StoredAgent): ApiError {
  return new ApiError(
    "agent_not_ready",
    `agent ${agent.name} is ${agent.state === "ready" ? "restarting" : agent.state}${agent.lastError === undefined ? "" : ` (${agent.lastError})`}; ${agent.state === "stopped" ? `start it with POST /v1/agents/${agent.id}/start` : "send the message again once its state is ready (GET /v1/agents/{id})"}`,
  );
}
