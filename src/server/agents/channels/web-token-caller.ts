import type { Context } from "hono";
import { ApiError } from "../../http/api-error.js";
import { requireTokenOrigin } from "../../sandboxes/token-origin.js";
import type { Caller } from "../../store/projects.js";
import type { ProjectRepository } from "../../store/store.js";
import { ChannelStore, type StoredChannel } from "./channel-store.js";

/**
 * Everything a web channel's token reaches under its agent, by method and path; anything else
 * is refused. A list of what is allowed: a route added later stays out of a token's reach until
 * it is added here.
 */
const reach: ReadonlyArray<{ readonly methods: readonly string[]; readonly path: RegExp }> = [
  { methods: ["POST"], path: /^\/messages$/ },
  { methods: ["GET", "HEAD"], path: /^\/conversations$/ },
  { methods: ["GET", "HEAD"], path: /^\/conversations\/[^/]+$/ },
  { methods: ["POST"], path: /^\/conversations\/[^/]+\/stop$/ },
];

const agentPath = /^\/v1\/agents\/([^/]+)(\/.*)?$/;

const notValid =
  "the agent web token is not valid: unknown, expired, or its channel was deleted; the app must get a new one (POST /v1/agents/{id}/channels/web)";

/**
 * Agent web tokens as a way in (`Authorization: Bearer`, or `X-API-Key`): a token reaches its
 * agent's messages and conversations, from its Origin when it is bound to one. Unknown, expired,
 * or of a deleted channel (or agent): 401; anything beyond its reach: 403. The caller names the
 * channel, and the message routes keep it to the conversations started with it (any other: 404).
 */
export function webTokenCaller(
  channels: ChannelStore,
  projects: ProjectRepository,
): (c: Context, presented: string | undefined) => Promise<Caller | string | undefined> {
  return async (c, presented) => {
    if (presented === undefined || !ChannelStore.looksLikeWebToken(presented)) return undefined;
    const channel = channels.webChannelOf(presented);
    const project = channel === undefined ? undefined : await projects.byId(channel.projectId);
    if (channel === undefined || project === undefined) return notValid;
    authorize(c, channel);
    return { project, actor: `agent web token ${channel.id}`, agentWebChannelId: channel.id };
  };
}

/** Throws the 403 of a request outside the token's reach. */
function authorize(c: Context, channel: StoredChannel): void {
  if (channel.type === "web") requireTokenOrigin(c, channel.config.origin, "agent web token");
  const [, agentId, rest = ""] = agentPath.exec(c.req.path) ?? [];
  const method = c.req.method.toUpperCase();
  if (agentId !== undefined && agentId !== channel.agentId) {
    throw new ApiError(
      "forbidden",
      `this agent web token is for agent ${channel.agentId}, not for ${agentId}`,
    );
  }
  if (
    agentId === undefined ||
    !reach.some((each) => each.path.test(rest) && each.methods.includes(method))
  ) {
    throw new ApiError(
      "forbidden",
      `an agent web token cannot ${c.req.method} ${c.req.path}: it reaches its agent's messages and conversations only (/v1/agents/${channel.agentId}/messages, …/conversations); use the project's API key`,
    );
  }
}
