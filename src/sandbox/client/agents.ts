import type { z } from "zod";
import type { ServiceConnection } from "../../core/config.js";
import { AgentNotReadyError } from "../../core/errors/agent-not-ready-error.js";
import { AgentTurnError } from "../../core/errors/agent-turn-error.js";
import { readServerSentEvents } from "../../core/http/sse.js";
import {
  type AgentChannel,
  type AgentChannelType,
  agentChannelListSchema,
  type CreateSlackChannelRequest,
  type CreateWebChannelRequest,
  type CreateWebhookChannelRequest,
  createdSlackChannelSchema,
  createdWebChannelSchema,
  createdWebhookChannelSchema,
} from "../../core/wire/agent-channels.js";
import {
  type AgentAttachment,
  type AgentConversation,
  type AgentConversationSummary,
  agentConversationListSchema,
  agentConversationSchema,
} from "../../core/wire/agent-conversations.js";
import {
  type AgentLogLine,
  type AgentRecord,
  agentListSchema,
  agentLogLineSchema,
  agentLogsSchema,
  agentRecordSchema,
  type CreateAgentRequest,
  type UpdateAgentRequest,
} from "../../core/wire/agents.js";
import { AgentReply } from "./agent-reply.js";
import { resolveConnection, type SandboxConnection, sandboxJson, sandboxRequest } from "./http.js";

/** What `send()` takes. */
export interface SendMessageOptions {
  /** The message's text (1 byte to 32 KiB). */
  readonly content: string;
  /** Continue this conversation (`conv_…`, from an earlier reply); without it, a new one starts. */
  readonly conversationId?: string;
  readonly attachments?: readonly AgentAttachment[];
  /** Stops the turn, on the service too. */
  readonly signal?: AbortSignal;
}

export interface LogOptions {
  /** Keep reading new lines as they are written, until `signal` aborts or the loop breaks. */
  readonly follow?: boolean;
  /** How many of the last lines to start with (the service's default when not given). */
  readonly tail?: number;
  readonly signal?: AbortSignal;
}

export interface WaitOptions {
  readonly signal?: AbortSignal;
  /** Called with each record seen while waiting (for progress). */
  readonly onRecord?: (record: AgentRecord) => void;
  /** How often to look, in ms (default 500). */
  readonly intervalMs?: number;
}

/** What `channels.add()` answers: the channel, and what only this answer shows. */
export type CreatedChannel<Type extends AgentChannelType> = {
  web: z.infer<typeof createdWebChannelSchema>;
  webhook: z.infer<typeof createdWebhookChannelSchema>;
  slack: z.infer<typeof createdSlackChannelSchema>;
}[Type];

export type ChannelRequest<Type extends AgentChannelType> = {
  web: CreateWebChannelRequest;
  webhook: CreateWebhookChannelRequest;
  slack: CreateSlackChannelRequest;
}[Type];

const createdChannelSchemas = {
  web: createdWebChannelSchema,
  webhook: createdWebhookChannelSchema,
  slack: createdSlackChannelSchema,
} as const;

/**
 * The project's managed agents: a tool-calling agent process in a sandbox of its own, that talks
 * to an OpenAI-compatible model whose key never enters the sandbox. Works in Node and browsers.
 *
 * @example
 * const agents = new Agents();
 * const agent = await agents.create({
 *   name: "helper",
 *   model: { baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey: "openai/OPENAI_API_KEY" },
 * });
 * await agents.waitUntilReady(agent.id);
 * const reply = await agents.send(agent.id, { content: "How many files are in /workspace?" });
 * for await (const part of reply) if (part.type === "text-delta") process.stdout.write(part.delta);
 * const next = await agents.send(agent.id, { content: "And now?", conversationId: reply.conversationId });
 */
export class Agents {
  private readonly connection: ServiceConnection;
  /** An agent's conversations, kept by the service. */
  readonly conversations: AgentConversations;
  /** Where messages come from besides the API: the web, a webhook, Slack. */
  readonly channels: AgentChannels;

  constructor(connection: SandboxConnection = {}) {
    this.connection = resolveConnection(connection);
    this.conversations = new AgentConversations(this.connection);
    this.channels = new AgentChannels(this.connection);
  }

  /**
   * Creates an agent. It answers at once in state `starting`: its sandbox is made and its
   * packages installed in the background ({@link Agents.waitUntilReady}).
   */
  create(request: CreateAgentRequest): Promise<AgentRecord> {
    return sandboxJson(this.connection, "POST", "/v1/agents", agentRecordSchema, {
      json: request,
    });
  }

  async list(): Promise<AgentRecord[]> {
    return (await sandboxJson(this.connection, "GET", "/v1/agents", agentListSchema)).agents;
  }

  get(agentId: string): Promise<AgentRecord> {
    return sandboxJson(this.connection, "GET", agentPath(agentId), agentRecordSchema);
  }

  /** Changes the instructions, model or tags; a new model restarts the agent's process. */
  update(agentId: string, changes: UpdateAgentRequest): Promise<AgentRecord> {
    return sandboxJson(this.connection, "PATCH", agentPath(agentId), agentRecordSchema, {
      json: changes,
    });
  }

  /** Stops the agent and deletes it, its workspace and its conversations. */
  async delete(agentId: string): Promise<void> {
    const response = await sandboxRequest(this.connection, "DELETE", agentPath(agentId));
    await response.body?.cancel();
  }

  /** Stops its process and sandbox; its workspace is kept for `start()`. */
  stop(agentId: string): Promise<AgentRecord> {
    return sandboxJson(this.connection, "POST", `${agentPath(agentId)}/stop`, agentRecordSchema);
  }

  /** Starts a stopped agent again (state `starting`, then `ready`). */
  start(agentId: string): Promise<AgentRecord> {
    return sandboxJson(this.connection, "POST", `${agentPath(agentId)}/start`, agentRecordSchema);
  }

  /**
   * Resolves with the record once the agent is `ready`; rejects with {@link AgentNotReadyError}
   * (its `lastError` in the message) if it crashes or stops first.
   */
  async waitUntilReady(agentId: string, options: WaitOptions = {}): Promise<AgentRecord> {
    for (;;) {
      const record = await this.get(agentId);
      options.onRecord?.(record);
      if (record.state === "ready") return record;
      if (record.state !== "starting") throw new AgentNotReadyError(record);
      await delay(options.intervalMs ?? 500, options.signal);
    }
  }

  /**
   * Sends a message; resolves when the reply starts, with the reply to read as it streams. A
   * 409 (a turn already runs in that conversation, the agent is not ready) or 404 rejects here.
   */
  async send(agentId: string, options: SendMessageOptions): Promise<AgentReply> {
    const { content, conversationId, attachments, signal } = options;
    const response = await sandboxRequest(
      this.connection,
      "POST",
      `${agentPath(agentId)}/messages`,
      {
        json: {
          content,
          ...(conversationId === undefined ? {} : { conversationId }),
          ...(attachments === undefined ? {} : { attachments }),
        },
        headers: { accept: "text/event-stream" },
        signal,
      },
    );
    return new AgentReply(response, signal);
  }

  /**
   * The agent's log lines: its process's output and what the service did (started, restarted,
   * installed). With `follow`, new lines keep coming until `signal` aborts or the loop breaks.
   */
  async *logs(agentId: string, options: LogOptions = {}): AsyncGenerator<AgentLogLine> {
    const query = new URLSearchParams();
    if (options.follow) query.set("follow", "1");
    if (options.tail !== undefined) query.set("tail", String(options.tail));
    const path = `${agentPath(agentId)}/logs${query.size > 0 ? `?${query}` : ""}`;
    if (!options.follow) {
      const answer = await sandboxJson(this.connection, "GET", path, agentLogsSchema, {
        signal: options.signal,
      });
      yield* answer.lines;
      return;
    }
    const response = await sandboxRequest(this.connection, "GET", path, {
      headers: { accept: "text/event-stream" },
      signal: options.signal,
    });
    if (response.body === null) return;
    try {
      for await (const event of readServerSentEvents(response.body)) {
        // Lines that came in the same chunk as the abort are not the caller's any more.
        if (options.signal?.aborted) return;
        const line = agentLogLineSchema.safeParse(safeJson(event.data));
        if (line.success) yield line.data;
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      throw new AgentTurnError("the log stream dropped; follow it again", {
        kind: "transient",
        cause: error,
      });
    } finally {
      await response.body.cancel().catch(() => {});
    }
  }
}

/** An agent's conversations: `agents.conversations`. */
export class AgentConversations {
  /** @internal */
  constructor(private readonly connection: ServiceConnection) {}

  /** The agent's conversations, newest first. */
  async list(agentId: string): Promise<AgentConversationSummary[]> {
    const path = `${agentPath(agentId)}/conversations`;
    return (await sandboxJson(this.connection, "GET", path, agentConversationListSchema))
      .conversations;
  }

  /** A conversation with its messages, oldest first. */
  get(agentId: string, conversationId: string): Promise<AgentConversation> {
    return sandboxJson(
      this.connection,
      "GET",
      conversationPath(agentId, conversationId),
      agentConversationSchema,
    );
  }

  /** Stops the turn running in the conversation, if one is. */
  async stop(agentId: string, conversationId: string): Promise<void> {
    const path = `${conversationPath(agentId, conversationId)}/stop`;
    const response = await sandboxRequest(this.connection, "POST", path);
    await response.body?.cancel();
  }
}

/** An agent's channels: `agents.channels`. */
export class AgentChannels {
  /** @internal */
  constructor(private readonly connection: ServiceConnection) {}

  /**
   * Adds a channel and resolves with what only this answer shows: for `web`, the URL and a
   * short-lived token for a browser (`agentTransport()`); for `webhook`, the URL to POST signed
   * messages to and the signing secret; for `slack`, the Request URL to give Slack.
   */
  add<Type extends AgentChannelType>(
    agentId: string,
    type: Type,
    request: ChannelRequest<Type>,
  ): Promise<CreatedChannel<Type>> {
    const schema = createdChannelSchemas[type] as unknown as z.ZodType<CreatedChannel<Type>>;
    const path = `${agentPath(agentId)}/channels/${encodeURIComponent(type)}`;
    return sandboxJson(this.connection, "POST", path, schema, { json: request });
  }

  async list(agentId: string): Promise<AgentChannel[]> {
    const path = `${agentPath(agentId)}/channels`;
    return (await sandboxJson(this.connection, "GET", path, agentChannelListSchema)).channels;
  }

  /** Removes a channel: what is sent to it is refused from then on. */
  async remove(agentId: string, channelId: string): Promise<void> {
    const path = `${agentPath(agentId)}/channels/${encodeURIComponent(channelId)}`;
    const response = await sandboxRequest(this.connection, "DELETE", path);
    await response.body?.cancel();
  }
}

function agentPath(agentId: string): string {
  return `/v1/agents/${encodeURIComponent(agentId)}`;
}

function conversationPath(agentId: string, conversationId: string): string {
  return `${agentPath(agentId)}/conversations/${encodeURIComponent(conversationId)}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}
