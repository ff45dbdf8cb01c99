import type { DatabaseSync } from "node:sqlite";
import type { Context } from "hono";
import { Hono } from "hono";
import type { FailedAuthentications } from "../../http/auth.js";
import type { Caller } from "../../store/projects.js";
import { type SecretStores, SecretVault, sqliteSecretStores } from "../../store/secret-vault.js";
import type { ProjectRepository } from "../../store/store.js";
import type { AgentMirror } from "../agent-mirror.js";
import type { AgentTurns } from "../turns.js";
import { type ChannelAgents, channelRoutes } from "./channel-routes.js";
import { ChannelStore } from "./channel-store.js";
import { ChannelTurns } from "./channel-turns.js";
import type { OutboundPolicy } from "./outbound.js";
import type { ChannelParts } from "./parts.js";
import { slackRoutes } from "./slack-routes.js";
import { webTokenCaller } from "./web-token-caller.js";
import { webhookRoutes } from "./webhook-routes.js";

export type { OutboundPolicy } from "./outbound.js";

export interface AgentChannelsOptions {
  readonly db: DatabaseSync;
  /** The service's secret stores (the SQLite vault itself is taken too). */
  readonly vault: SecretStores | SecretVault;
  readonly projects: ProjectRepository;
  readonly agents: ChannelAgents;
  readonly turns: AgentTurns;
  /** The failed authentications per address that the API key's check counts too. */
  readonly failures: FailedAuthentications;
  /** Where replies may be sent (webhook callbacks, Slack's API). */
  readonly policy: OutboundPolicy;
  /** The waits between a reply's tries. Default 1 s, 2 s, 4 s, 8 s. */
  readonly retryDelaysMs?: readonly number[] | undefined;
  /** True once the service is closing: turns end, and no more replies are sent or tried. */
  readonly isClosing?: (() => boolean) | undefined;
  /** On a shared database: the copies of this instance's agents, their channels' ids with them. */
  readonly mirror?: Pick<AgentMirror, "changed" | "settled"> | undefined;
}

/** The channels of managed agents (issue 15): web, webhook and Slack. */
export interface AgentChannels {
  /** `POST /v1/channels/{webhook,slack}/{channelId}`: signed by the channel's secret, no API key. */
  readonly incomingRoutes: Hono;
  /** `/v1/agents/{id}/channels…`, behind the API key. */
  readonly keyRoutes: ReturnType<typeof channelRoutes>;
  /** Agent web tokens as a way in, for the API key's check (`AuthOptions.alternative`). */
  readonly caller: (
    c: Context,
    presented: string | undefined,
  ) => Promise<Caller | string | undefined>;
  /** Aborts the channels' turns and their replies' retries: the service is closing. */
  close(): void;
}

export function agentChannels(options: AgentChannelsOptions): AgentChannels {
  const vault =
    options.vault instanceof SecretVault ? sqliteSecretStores(options.vault) : options.vault;
  const { mirror } = options;
  const channels = new ChannelStore(options.db, vault, (agentId) => mirror?.changed(agentId));
  const isClosing = options.isClosing ?? (() => false);
  const turns = new ChannelTurns(options.turns, isClosing);
  const parts: ChannelParts = {
    channels,
    turns,
    vault,
    failures: options.failures,
    settled: () => mirror?.settled() ?? Promise.resolve(),
    replies: { policy: options.policy, retryDelaysMs: options.retryDelaysMs, isClosing },
  };
  return {
    incomingRoutes: new Hono().route("/", webhookRoutes(parts)).route("/", slackRoutes(parts)),
    keyRoutes: channelRoutes(parts, options.agents),
    caller: webTokenCaller(channels, options.projects),
    close: () => turns.close(),
  };
}
