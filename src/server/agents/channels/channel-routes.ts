import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import {
  type AgentChannel,
  type AgentChannelType,
  agentChannelTypes,
  createSlackChannelRequestSchema,
  createWebChannelRequestSchema,
  createWebhookChannelRequestSchema,
} from "../../../core/wire/agent-channels.js";
import { ApiError } from "../../http/api-error.js";
import type { AuthVariables } from "../../http/auth.js";
import { linkOrigin } from "../../http/own-origin.js";
import { readJson } from "../../http/read-json.js";
import { parseInput } from "../../sandboxes/input.js";
import { botTokenProblem } from "./bot-token.js";
import type { StoredChannel } from "./channel-store.js";
import { vetUrl } from "./outbound.js";
import type { ChannelParts } from "./parts.js";

/** The agents channels attach to: only whether one exists in a project. */
export interface ChannelAgents {
  get(projectId: string, agentId: string): unknown;
}

/** The channel as the API shows it, its URLs on the address the request came to. */
export function channelView(channel: StoredChannel, base: string): AgentChannel {
  const common = { id: channel.id, agentId: channel.agentId, createdAt: channel.createdAt };
  switch (channel.type) {
    case "web":
      return {
        ...common,
        type: "web",
        url: `${base}/v1/agents/${channel.agentId}/messages`,
        ...channel.config,
      };
    case "webhook":
      return {
        ...common,
        type: "webhook",
        url: `${base}/v1/channels/webhook/${channel.id}`,
        ...channel.config,
      };
    case "slack":
      return {
        ...common,
        type: "slack",
        url: `${base}/v1/channels/slack/${channel.id}`,
        ...channel.config,
      };
  }
}

function channelType(type: string): AgentChannelType {
  const known = agentChannelTypes.find((each) => each === type);
  if (known === undefined) {
    throw new ApiError(
      "invalid_request",
      `there is no channel type ${JSON.stringify(type)}; the types are ${agentChannelTypes.join(", ")}`,
    );
  }
  return known;
}

// A web channel needs no body: its defaults are a token of an hour, bound to no origin.
async function optionalJson(request: Request): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared === "0" || (declared === null && request.body === null)) return {};
  return readJson(request);
}

/**
 * An agent's channels: `POST /v1/agents/{id}/channels/{type}` attaches one (its token or secret
 * shown this once), `GET` lists them (never a token or secret), `DELETE …/{channelId}` removes
 * one: its token stops working and its turns are aborted at once.
 */
export function channelRoutes(parts: ChannelParts, agents: ChannelAgents) {
  const requireAgent = (projectId: string, agentId: string) => {
    if (agents.get(projectId, agentId) === undefined) {
      throw new ApiError(
        "not_found",
        `this project has no agent ${JSON.stringify(agentId)}; GET /v1/agents lists them`,
      );
    }
  };
  return new Hono<{ Variables: AuthVariables }>()
    .post("/v1/agents/:id/channels/:type", async (c) => {
      const type = channelType(c.req.param("type"));
      const projectId = c.get("project").id;
      const agentId = c.req.param("id");
      requireAgent(projectId, agentId);
      const base = linkOrigin(c);
      if (type === "web") {
        const request = parseInput(createWebChannelRequestSchema, await optionalJson(c.req.raw));
        const { channel, token } = parts.channels.createWeb(projectId, agentId, request);
        await parts.settled();
        const view = channelView(channel, base) as Extract<AgentChannel, { type: "web" }>;
        return c.json({ channel: view, url: view.url, token, expiresAt: view.expiresAt }, 201);
      }
      if (type === "webhook") {
        const request = parseInput(createWebhookChannelRequestSchema, await readJson(c.req.raw));
        const target = await vetUrl(new URL(request.callbackUrl), parts.replies.policy);
        if (typeof target === "string") {
          throw new ApiError("invalid_request", `callbackUrl cannot be called: ${target}`);
        }
        const secret = `whsec_${randomBytes(32).toString("base64url")}`;
        const channel = parts.channels.createSigned(projectId, agentId, "webhook", request, secret);
        // Every instance forwards its URL's requests here once this answers.
        await parts.settled();
        const view = channelView(channel, base);
        return c.json({ channel: view, url: view.url, secret }, 201);
      }
      // The body holds the signing secret: a refusal must not quote it.
      const request = parseInput(
        createSlackChannelRequestSchema,
        await readJson(c.req.raw, { quoteBody: false }),
      );
      const apiUrl = new URL(request.apiBaseUrl);
      const problem = await botTokenProblem(parts.vault, projectId, request.botToken, apiUrl);
      if (problem !== undefined) {
        throw new ApiError(
          problem.status === 404 ? "not_found" : "invalid_request",
          problem.message,
        );
      }
      const target = await vetUrl(apiUrl, parts.replies.policy);
      if (typeof target === "string") {
        throw new ApiError("invalid_request", `apiBaseUrl cannot be called: ${target}`);
      }
      const { signingSecret, ...config } = request;
      const channel = parts.channels.createSigned(
        projectId,
        agentId,
        "slack",
        config,
        signingSecret,
      );
      await parts.settled();
      const view = channelView(channel, base);
      return c.json({ channel: view, url: view.url }, 201);
    })
    .get("/v1/agents/:id/channels", (c) => {
      const projectId = c.get("project").id;
      const agentId = c.req.param("id");
      requireAgent(projectId, agentId);
      const base = linkOrigin(c);
      const channels = parts.channels.list(projectId, agentId);
      return c.json({ channels: channels.map((channel) => channelView(channel, base)) });
    })
    .delete("/v1/agents/:id/channels/:channelId", async (c) => {
      const projectId = c.get("project").id;
      const agentId = c.req.param("id");
      requireAgent(projectId, agentId);
      const channelId = c.req.param("channelId");
      if (!parts.channels.delete(projectId, agentId, channelId)) {
        throw new ApiError(
          "not_found",
          `agent ${agentId} has no channel ${JSON.stringify(channelId)}; GET /v1/agents/${agentId}/channels lists them`,
        );
      }
      parts.turns.stopChannel(channelId);
      await parts.settled();
      return c.body(null, 204);
    });
}
