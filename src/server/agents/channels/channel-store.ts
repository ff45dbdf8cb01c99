import { randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { randomHex } from "../../../core/ids.js";
import type { AgentChannelType } from "../../../core/wire/agent-channels.js";
import { transaction } from "../../store/database.js";
import { hashToken } from "../../store/sandbox-tokens.js";
import type { SecretStores } from "../../store/secret-vault.js";

/** What every agent web token starts with: tells it apart from an API key or a sandbox token. */
export const webTokenPrefix = "cairn_awt_";

const webTokenPattern = /^cairn_awt_[A-Za-z0-9_-]{43}$/;
const channelIdPattern = /^chn_[0-9a-f]{24}$/;

/** How long a channel remembers an event id it took: longer than Slack retries an event (about an hour), and the 5-minute window. */
const eventMemoryMs = 2 * 60 * 60 * 1000;

/** A channel's settings, by type: secret references and non-secret values only. */
export interface ChannelConfigs {
  readonly web: { readonly origin: string | null; readonly expiresAt: string };
  readonly webhook: { readonly callbackUrl: string };
  readonly slack: { readonly botToken: string; readonly apiBaseUrl: string };
}

/** A channel as stored. */
export type StoredChannel = {
  [T in AgentChannelType]: {
    readonly id: string;
    readonly projectId: string;
    readonly agentId: string;
    readonly type: T;
    readonly config: ChannelConfigs[T];
    readonly createdAt: string;
  };
}[AgentChannelType];

interface ChannelRow {
  id: string;
  project_id: string;
  agent_id: string;
  type: string;
  config: string;
  created_at: string;
}

function toChannel(row: ChannelRow): StoredChannel {
  return {
    id: row.id,
    projectId: row.project_id,
    agentId: row.agent_id,
    type: row.type,
    config: JSON.parse(row.config),
    createdAt: row.created_at,
  } as StoredChannel;
}

/** Whether `input` is a channel id as the store makes them. */
export function isChannelId(input: string): boolean {
  return channelIdPattern.test(input);
}

/** Whether this file has a channel of that id (of any project). */
export function hasChannel(db: DatabaseSync, channelId: string): boolean {
  return db.prepare("SELECT 1 FROM agent_channels WHERE id = ?").get(channelId) !== undefined;
}

/** Every channel of an agent, oldest first (for their copy in the shared database). */
export function agentChannelsOf(db: DatabaseSync, agentId: string): StoredChannel[] {
  const rows = db
    .prepare("SELECT * FROM agent_channels WHERE agent_id = ? ORDER BY created_at, id")
    .all(agentId) as unknown as ChannelRow[];
  return rows.map(toChannel);
}

/**
 * Agent channels (agent_channels), the web tokens (as their SHA-256, agent_channel_tokens) and
 * signing secrets (sealed by the vault, agent_channel_secrets) that go with them, and the event
 * ids each channel has taken (agent_channel_events), to refuse a replay and drop a retry.
 */
export class ChannelStore {
  constructor(
    private readonly db: DatabaseSync,
    private readonly vault: Pick<SecretStores, "setChannelSecret" | "channelSecret">,
    /** Told of the agent whose channels changed here (their copy in the shared database follows). */
    private readonly changed: (agentId: string) => void = () => undefined,
  ) {}

  /** Whether `value` has a web token's shape (and so is no API key to look up). */
  static looksLikeWebToken(value: string): boolean {
    return value.startsWith(webTokenPrefix);
  }

  /** A web channel and its token, whose value is returned this once. */
  createWeb(
    projectId: string,
    agentId: string,
    request: { expiresInSeconds: number; origin?: string | undefined },
    now = new Date(),
  ): { channel: StoredChannel; token: string } {
    const token = `${webTokenPrefix}${randomBytes(32).toString("base64url")}`;
    const config: ChannelConfigs["web"] = {
      origin: request.origin ?? null,
      expiresAt: new Date(now.getTime() + request.expiresInSeconds * 1000).toISOString(),
    };
    const channel = transaction(this.db, () => {
      const created = this.insert(projectId, agentId, "web", config, now);
      this.db
        .prepare("INSERT INTO agent_channel_tokens (token_hash, channel_id) VALUES (?, ?)")
        .run(hashToken(token), created.id);
      return created;
    });
    this.changed(agentId);
    return { channel, token };
  }

  /** A channel with a signing secret (a webhook's, made here; a Slack app's, given). */
  createSigned<T extends "webhook" | "slack">(
    projectId: string,
    agentId: string,
    type: T,
    config: ChannelConfigs[T],
    secret: string,
    now = new Date(),
  ): StoredChannel {
    const channel = transaction(this.db, () => {
      const created = this.insert(projectId, agentId, type, config, now);
      this.vault.setChannelSecret(projectId, created.id, secret);
      return created;
    });
    this.changed(agentId);
    return channel;
  }

  /** An agent's channels, oldest first. */
  list(projectId: string, agentId: string): StoredChannel[] {
    const rows = this.db
      .prepare(
        "SELECT * FROM agent_channels WHERE project_id = ? AND agent_id = ? ORDER BY created_at, id",
      )
      .all(projectId, agentId) as unknown as ChannelRow[];
    return rows.map(toChannel);
  }

  /** A channel by its id alone (a request to its URL names no project); undefined if none. */
  byId(channelId: string): StoredChannel | undefined {
    if (!channelIdPattern.test(channelId)) return undefined;
    const row = this.db.prepare("SELECT * FROM agent_channels WHERE id = ?").get(channelId) as
      | ChannelRow
      | undefined;
    return row === undefined ? undefined : toChannel(row);
  }

  /** Deletes a channel, its token or secret and its event ids; false when the agent has no such channel. */
  delete(projectId: string, agentId: string, channelId: string): boolean {
    const result = this.db
      .prepare("DELETE FROM agent_channels WHERE project_id = ? AND agent_id = ? AND id = ?")
      .run(projectId, agentId, channelId);
    if (result.changes !== 1) return false;
    this.changed(agentId);
    return true;
  }

  /** The web channel of a token that exists and has not expired; else undefined. */
  webChannelOf(token: string, now = new Date()): StoredChannel | undefined {
    if (!webTokenPattern.test(token)) return undefined;
    const row = this.db
      .prepare(
        "SELECT c.* FROM agent_channel_tokens t JOIN agent_channels c ON c.id = t.channel_id WHERE t.token_hash = ?",
      )
      .get(hashToken(token)) as ChannelRow | undefined;
    const channel = row === undefined ? undefined : toChannel(row);
    if (channel?.type !== "web" || Date.parse(channel.config.expiresAt) <= now.getTime()) {
      return undefined;
    }
    return channel;
  }

  /** A channel's signing secret, opened; throws an UnsealError when it cannot be. */
  signingSecret(channel: StoredChannel): string | undefined {
    return this.vault.channelSecret(channel.projectId, channel.id);
  }

  /**
   * Records that `channelId` took `eventId`; false when it already had (a replay, or a retry of
   * one taken), and then nothing changes. Ids older than two hours are forgotten.
   */
  takeEvent(channelId: string, eventId: string, now = new Date()): boolean {
    return transaction(this.db, () => {
      this.db
        .prepare("DELETE FROM agent_channel_events WHERE channel_id = ? AND received_at < ?")
        .run(channelId, new Date(now.getTime() - eventMemoryMs).toISOString());
      const result = this.db
        .prepare(
          "INSERT OR IGNORE INTO agent_channel_events (channel_id, event_id, received_at) VALUES (?, ?, ?)",
        )
        .run(channelId, eventId, now.toISOString());
      return result.changes === 1;
    });
  }

  /** Forgets an event id, so that the sender may send it again (its turn never started). */
  forgetEvent(channelId: string, eventId: string): void {
    this.db
      .prepare("DELETE FROM agent_channel_events WHERE channel_id = ? AND event_id = ?")
      .run(channelId, eventId);
  }

  private insert<T extends AgentChannelType>(
    projectId: string,
    agentId: string,
    type: T,
    config: ChannelConfigs[T],
    now: Date,
  ): StoredChannel {
    const row: ChannelRow = {
      id: `chn_${randomHex(12)}`,
      project_id: projectId,
      agent_id: agentId,
      type,
      config: JSON.stringify(config),
      created_at: now.toISOString(),
    };
    this.db
      .prepare(
        "INSERT INTO agent_channels (id, project_id, agent_id, type, config, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(row.id, row.project_id, row.agent_id, row.type, row.config, row.created_at);
    return toChannel(row);
  }
}
