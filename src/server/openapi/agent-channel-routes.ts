import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  agentChannelListSchema,
  agentChannelTypes,
  createdSlackChannelSchema,
  createdWebChannelSchema,
  createdWebhookChannelSchema,
  createSlackChannelRequestSchema,
  createWebChannelRequestSchema,
  createWebhookChannelRequestSchema,
  webhookAcceptedSchema,
  webhookMessageSchema,
} from "../../core/wire/agent-channels.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const agent = z.object({ id: z.string().describe("agt_ + 24 hex") });
const channelId = z.object({ channelId: z.string().describe("chn_ + 24 hex") });

const webhookSignature =
  "cairn-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<raw body>\")>, the channel's secret (whsec_…) as the key's UTF-8 bytes; t within 5 minutes of the service's clock.";

const replies =
  "Replies go only to public addresses (the name resolved once and the connection made to that address), unless the service names the host in egress.hosts (--egress-host) or is started with agents.allowPrivateCallbacks; redirects are not followed.";

/** Channels in the OpenAPI document: how people reach a managed agent. */
export function agentChannelRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  const refused = errors("unauthorized");
  return [
    {
      method: "post",
      path: "/v1/agents/{id}/channels/{type}",
      summary: "Attach a channel to an agent: web (a browser token), webhook or slack",
      description: `An unknown type is 400 naming ${agentChannelTypes.join(", ")}. web: the body may be empty; the token (1 h by default, at most 24 h) goes in Authorization: Bearer and reaches that agent's POST …/messages, GET …/conversations and …/conversations/{cid}, and POST …/conversations/{cid}/stop only (403 elsewhere, and from another Origin when bound to one; 401 once expired or the channel is deleted), and of the agent's conversations only those started with it: any other is 404, as an unknown one. Mint one web channel per end user or session. webhook: messages come to url, signed (${webhookSignature}); replies are POSTed to callbackUrl signed the same way, tried again after 1, 2, 4 and 8 s on 5xx or a connection error, never on 4xx. slack: url is the Events API Request URL; botToken names a secret (<store>/<KEY>) that the host sends to apiBaseUrl only if the secret may go to its host (the secret's hosts, else the store's allowlist: add slack.com); the signing secret is stored sealed. ${replies} A token or secret is in this answer only.`,
      request: {
        params: agent.extend({ type: z.enum(agentChannelTypes) }),
        body: {
          content: {
            "application/json": {
              schema: z.union([
                createWebChannelRequestSchema,
                createWebhookChannelRequestSchema,
                createSlackChannelRequestSchema,
              ]),
            },
          },
        },
      },
      responses: {
        201: json(
          z.union([
            createdWebChannelSchema,
            createdWebhookChannelSchema,
            createdSlackChannelSchema,
          ]),
          "the channel, with its token (web) or secret (webhook), shown this once",
        ),
        ...errors("invalid_request", "not_found", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/v1/agents/{id}/channels",
      summary: "An agent's channels, never a token or a secret",
      request: { params: agent },
      responses: {
        200: json(agentChannelListSchema, "the channels, oldest first"),
        ...errors("not_found"),
        ...common,
      },
    },
    {
      method: "delete",
      path: "/v1/agents/{id}/channels/{channelId}",
      summary: "Remove a channel: its token stops working and its running turns are aborted",
      request: { params: agent.merge(channelId) },
      responses: { 204: { description: "removed" }, ...errors("not_found"), ...common },
    },
    {
      method: "post",
      path: "/v1/channels/webhook/{channelId}",
      summary: "Send a webhook channel a message (signed; no API key)",
      description: `${webhookSignature} Each id is taken once. A bad, stale, tampered or replayed request, or an unknown channel, is 401 with one body, and counts as a failed authentication of the address (429 past the limit). Accepted: 202 at once while the turn runs in the conversation of the message's thread (its id when it names none; a thread's messages run one after another), and the reply { thread, text, conversationId, inReplyTo, error? } is POSTed to the callback URL. A turn that cannot start (the agent is not ready) is 409, and the id may be sent again.`,
      security: [],
      request: {
        params: channelId,
        headers: z.object({ "cairn-signature": z.string() }),
        body: { content: { "application/json": { schema: webhookMessageSchema } } },
      },
      responses: {
        202: json(webhookAcceptedSchema, "taken; the reply follows at the callback URL"),
        ...errors("invalid_request", "agent_not_ready", "rate_limited"),
        ...refused,
      },
    },
    {
      method: "post",
      path: "/v1/channels/slack/{channelId}",
      summary: "A Slack channel's Events API Request URL (signed by Slack; no API key)",
      description:
        "Every request must carry X-Slack-Signature (v0=<hex HMAC-SHA256(signing secret, \"v0:<ts>:<raw body>\")>) and X-Slack-Request-Timestamp within 5 minutes; otherwise 401 with the webhook channel's one body. url_verification is answered with its challenge. An event_callback is taken once by its event_id (Slack's retries, X-Slack-Retry-Num, are answered 200 and dropped); a person's message or app_mention (not a bot's, not a subtype) is answered 200 at once, its turn run in the conversation of its Slack thread (thread_ts, else ts), and the reply posted in that thread with chat.postMessage; Slack's {ok: false, error} answers are logged.",
      security: [],
      request: {
        params: channelId,
        headers: z.object({
          "x-slack-signature": z.string(),
          "x-slack-request-timestamp": z.string(),
        }),
        body: { content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } },
      },
      responses: {
        200: json(
          z.union([z.object({ challenge: z.string() }), z.object({ ok: z.literal(true) })]),
          "the challenge, or taken",
        ),
        ...errors("invalid_request", "rate_limited"),
        ...refused,
      },
    },
  ];
}
