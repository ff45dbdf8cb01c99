import type { DatabaseSync } from "node:sqlite";
import type { OpenAIChatMessage } from "../../agents/protocol.js";
import {
  type AgentConversationSummary,
  type AgentMessage,
  type AgentMessagePart,
  newAgentMessageId,
  newConversationId,
} from "../../core/wire/agent-conversations.js";
import { transaction } from "../store/database.js";

/** The thread of a channel a conversation belongs to. */
export interface ConversationChannel {
  readonly type: "web" | "webhook" | "slack";
  readonly id: string;
  readonly thread: string;
}

/**
 * The channel a conversation is started on. Without a thread, the conversation is a thread of
 * its own, named by the conversation's id (a web channel's conversations).
 */
export type ConversationOrigin = Omit<ConversationChannel, "thread"> & {
  readonly thread?: string | undefined;
};

/** A channel, to keep to the conversations started on it. */
export type ConversationScope = Pick<ConversationChannel, "type" | "id">;

/** A message to add: what is shown (UI parts) and what it adds to the model's history. */
export interface NewAgentMessage {
  /** Its id, when it was named before (a reply's id is in its stream); default a new one. */
  readonly id?: string | undefined;
  readonly role: "user" | "assistant";
  readonly parts: readonly AgentMessagePart[];
  readonly chat: readonly OpenAIChatMessage[];
  readonly traceId?: string | undefined;
}

interface ConversationRow {
  id: string;
  title: string;
  channel_type: string | null;
  channel_id: string | null;
  created_at: string;
  updated_at: string;
  message_count: number;
}

interface MessageRow {
  id: string;
  role: "user" | "assistant";
  parts: string;
  trace_id: string | null;
  created_at: string;
}

/** The longest title, in characters: the start of the first message. */
const titleLength = 80;

/** Keeps a query to one channel's conversations; its parameters are {@link scopeParams}'. */
const inScope = "(? IS NULL OR (c.channel_type = ? AND c.channel_id = ?))";

/** The parameters of {@link inScope}: NULLs for every conversation. */
function scopeParams(scope: ConversationScope | undefined): Array<string | null> {
  return scope === undefined ? [null, null, null] : [scope.type, scope.type, scope.id];
}

const summaryColumns = `c.id, c.title, c.channel_type, c.channel_id, c.created_at, c.updated_at,
  (SELECT count(*) FROM agent_messages m WHERE m.conversation_id = c.id) AS message_count`;

function summaryOf(row: ConversationRow): AgentConversationSummary {
  return {
    id: row.id,
    title: row.title,
    ...(row.channel_type === null || row.channel_id === null
      ? {}
      : {
          channel: {
            type: row.channel_type as ConversationChannel["type"],
            id: row.channel_id,
          },
        }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    messageCount: row.message_count,
  };
}

/** A title from a first message: its first line, cut to 80 characters. */
export function conversationTitle(content: string): string {
  const line = content.trim().split("\n", 1)[0] ?? "";
  return line.length <= titleLength ? line : `${line.slice(0, titleLength - 1)}…`;
}

/** An agent's conversations and their messages (tables of schema step 13). */
export class ConversationStore {
  constructor(private readonly db: DatabaseSync) {}

  /**
   * A new conversation, or for a channel thread the one it already has (two messages of a new
   * thread arriving together get the same one). A channel without a thread makes the new
   * conversation its thread.
   */
  create(
    projectId: string,
    agentId: string,
    title: string,
    channel?: ConversationOrigin,
  ): AgentConversationSummary {
    const now = new Date().toISOString();
    const id = newConversationId();
    this.db
      .prepare(`
        INSERT INTO agent_conversations (id, project_id, agent_id, title, channel_type,
          channel_id, channel_thread, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (agent_id, channel_type, channel_id, channel_thread) DO NOTHING`)
      .run(
        id,
        projectId,
        agentId,
        title,
        channel?.type ?? null,
        channel?.id ?? null,
        channel === undefined ? null : (channel.thread ?? id),
        now,
        now,
      );
    const stored =
      channel?.thread === undefined
        ? id
        : this.forChannel(projectId, agentId, { ...channel, thread: channel.thread });
    return this.get(projectId, agentId, stored ?? id) as AgentConversationSummary;
  }

  /** A conversation of the agent (started on `scope`, when given); undefined if none. */
  get(
    projectId: string,
    agentId: string,
    id: string,
    scope?: ConversationScope,
  ): AgentConversationSummary | undefined {
    const row = this.db
      .prepare(`SELECT ${summaryColumns} FROM agent_conversations c
        WHERE c.id = ? AND c.project_id = ? AND c.agent_id = ? AND ${inScope}`)
      .get(id, projectId, agentId, ...scopeParams(scope)) as ConversationRow | undefined;
    return row === undefined ? undefined : summaryOf(row);
  }

  /** The conversation of a channel thread, if one was started there. */
  forChannel(projectId: string, agentId: string, channel: ConversationChannel): string | undefined {
    const row = this.db
      .prepare(`SELECT id FROM agent_conversations
        WHERE project_id = ? AND agent_id = ? AND channel_type = ? AND channel_id = ?
          AND channel_thread = ?`)
      .get(projectId, agentId, channel.type, channel.id, channel.thread) as
      | { id: string }
      | undefined;
    return row?.id;
  }

  /** The agent's conversations (started on `scope`, when given), the most recently active first. */
  list(
    projectId: string,
    agentId: string,
    limit: number,
    scope?: ConversationScope,
  ): AgentConversationSummary[] {
    const rows = this.db
      .prepare(`SELECT ${summaryColumns} FROM agent_conversations c
        WHERE c.project_id = ? AND c.agent_id = ? AND ${inScope}
        ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`)
      .all(projectId, agentId, ...scopeParams(scope), limit) as unknown as ConversationRow[];
    return rows.map(summaryOf);
  }

  /** The conversation's messages, oldest first. */
  messages(conversationId: string): AgentMessage[] {
    const rows = this.db
      .prepare(`SELECT id, role, parts, trace_id, created_at FROM agent_messages
        WHERE conversation_id = ? ORDER BY seq`)
      .all(conversationId) as unknown as MessageRow[];
    return rows.map((row) => ({
      id: row.id,
      role: row.role,
      parts: JSON.parse(row.parts) as AgentMessagePart[],
      createdAt: row.created_at,
      ...(row.trace_id === null ? {} : { traceId: row.trace_id }),
    }));
  }

  /** The model's history: what each stored message adds, in order. */
  history(conversationId: string): OpenAIChatMessage[] {
    const rows = this.db
      .prepare("SELECT chat FROM agent_messages WHERE conversation_id = ? ORDER BY seq")
      .all(conversationId) as unknown as Array<{ chat: string }>;
    return rows.flatMap((row) => JSON.parse(row.chat) as OpenAIChatMessage[]);
  }

  /** Adds a message at the end of the conversation; returns its id. */
  append(conversationId: string, message: NewAgentMessage): string {
    const id = message.id ?? newAgentMessageId();
    const now = new Date().toISOString();
    transaction(this.db, () => {
      this.db
        .prepare(`
          INSERT INTO agent_messages (id, conversation_id, seq, role, parts, chat, trace_id,
            created_at)
          VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM agent_messages
            WHERE conversation_id = ?), ?, ?, ?, ?, ?)`)
        .run(
          id,
          conversationId,
          conversationId,
          message.role,
          JSON.stringify(message.parts),
          JSON.stringify(message.chat),
          message.traceId ?? null,
          now,
        );
      this.db
        .prepare("UPDATE agent_conversations SET updated_at = ? WHERE id = ?")
        .run(now, conversationId);
    });
    return id;
  }
}
