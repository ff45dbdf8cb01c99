import { z } from "zod";
import { maxAgentMessageBytes } from "./agent-conversations.js";
import { accessLifetimeSchema, originSchema } from "./sandbox-access.js";
import { secretKeySchema, secretStoreNameSchema } from "./secrets.js";

/** The ways people reach an agent: `POST /v1/agents/{id}/channels/{type}`. */
export const agentChannelTypes = ["web", "webhook", "slack"] as const;

export type AgentChannelType = (typeof agentChannelTypes)[number];

/** Slack's Web API, where a Slack channel's replies go unless it names another. */
export const defaultSlackApiBaseUrl = "https://slack.com/api";

const httpUrl = (name: string) =>
  z
    .string({ error: `${name} must be an http or https URL` })
    .max(2048, `${name} is longer than 2048 characters`)
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === "http:" || url.protocol === "https:") && url.username === "";
      } catch {
        return false;
      }
    }, `${name} must be an http or https URL without user or password`);

/** A secret named by its store and key, `<store>/<KEY>`: the value stays in the vault. */
const secretReferenceSchema = (name: string) =>
  z.string({ error: `${name} must name a secret as "<store>/<KEY>"` }).refine((value) => {
    const [store = "", key = "", ...rest] = value.split("/");
    return (
      rest.length === 0 &&
      secretStoreNameSchema.safeParse(store).success &&
      secretKeySchema.safeParse(key).success
    );
  }, `${name} must name a secret as "<store>/<KEY>" (a secret store and one of its keys, as cairn secrets set made it), never the value itself`);

/** `POST /v1/agents/{id}/channels/web`: a browser's way in, for CairnChat. The body may be empty. */
export const createWebChannelRequestSchema = z.strictObject({
  expiresInSeconds: accessLifetimeSchema("expiresInSeconds").default(3600),
  origin: originSchema.optional(),
});

/** `POST /v1/agents/{id}/channels/webhook`: messages in over HTTP, replies out to `callbackUrl`. */
export const createWebhookChannelRequestSchema = z.strictObject({
  callbackUrl: httpUrl("callbackUrl"),
});

/** `POST /v1/agents/{id}/channels/slack`: the Events API in, `chat.postMessage` out. */
export const createSlackChannelRequestSchema = z.strictObject({
  botToken: secretReferenceSchema("botToken"),
  signingSecret: z
    .string({ error: "signingSecret must be the app's signing secret (Basic Information page)" })
    .min(8, "signingSecret is shorter than 8 characters: give the app's signing secret")
    .max(256, "signingSecret is longer than 256 characters"),
  apiBaseUrl: httpUrl("apiBaseUrl").default(defaultSlackApiBaseUrl),
});

export type CreateWebChannelRequest = z.input<typeof createWebChannelRequestSchema>;
export type CreateWebhookChannelRequest = z.input<typeof createWebhookChannelRequestSchema>;
export type CreateSlackChannelRequest = z.input<typeof createSlackChannelRequestSchema>;

const channelBase = {
  id: z.string().describe("chn_ + 24 hex"),
  agentId: z.string(),
  createdAt: z.string().describe("ISO 8601"),
};

/** A channel as the API shows it: never a token, a secret or a signing secret. */
export const agentChannelSchema = z.discriminatedUnion("type", [
  z.object({
    ...channelBase,
    type: z.literal("web"),
    url: z.string().describe("the agent's messages URL, which the token reaches"),
    origin: z.string().nullable().describe("the page origin the token is bound to, if any"),
    expiresAt: z.string().describe("when the token stops working, ISO 8601"),
  }),
  z.object({
    ...channelBase,
    type: z.literal("webhook"),
    url: z.string().describe("where signed messages are POSTed"),
    callbackUrl: z.string().describe("where signed replies are POSTed"),
  }),
  z.object({
    ...channelBase,
    type: z.literal("slack"),
    url: z.string().describe("the Events API Request URL to give Slack"),
    botToken: z.string().describe("the secret holding the bot token, <store>/<KEY>"),
    apiBaseUrl: z.string(),
  }),
]);

export type AgentChannel = z.infer<typeof agentChannelSchema>;

export const agentChannelListSchema = z.object({ channels: z.array(agentChannelSchema) });

/** The answer to a web channel's create: the token, shown this once. */
export const createdWebChannelSchema = z.object({
  channel: agentChannelSchema,
  url: z.string().describe("POST here with Authorization: Bearer <token>"),
  token: z.string().describe("cairn_awt_…: shown once, stored hashed"),
  expiresAt: z.string(),
});

/** The answer to a webhook channel's create: the signing secret, shown this once. */
export const createdWebhookChannelSchema = z.object({
  channel: agentChannelSchema,
  url: z.string(),
  secret: z.string().describe("the HMAC-SHA256 key of both directions: shown once, stored sealed"),
});

/** The answer to a Slack channel's create. */
export const createdSlackChannelSchema = z.object({ channel: agentChannelSchema, url: z.string() });

/** What a webhook channel takes: `POST /v1/channels/webhook/{channelId}`, signed. */
export const webhookMessageSchema = z.strictObject({
  id: z
    .string({ error: "id must be the message's unique id (a replay of an id is refused)" })
    .min(1, "id is empty")
    .max(200, "id is longer than 200 characters"),
  text: z
    .string({ error: "text must be the message's text" })
    .min(1, "text is empty")
    .refine(
      (text) => new TextEncoder().encode(text).length <= maxAgentMessageBytes,
      `text is over ${maxAgentMessageBytes / 1024} KiB (${maxAgentMessageBytes} bytes of UTF-8), the most a message to an agent may be`,
    ),
  thread: z
    .string({ error: "thread must be a string naming the conversation's thread" })
    .min(1, "thread is empty")
    .max(200, "thread is longer than 200 characters")
    .optional(),
});

export type WebhookMessage = z.infer<typeof webhookMessageSchema>;

/** What a webhook channel POSTs to its callback URL, signed the same way. */
export const webhookReplySchema = z.object({
  thread: z.string().describe("the message's thread, or its id when it named none"),
  text: z.string().describe("the agent's reply"),
  conversationId: z.string(),
  inReplyTo: z.string().describe("the id of the message answered"),
  error: z.string().optional().describe("why the turn failed, when it did (text is then empty)"),
});

export type WebhookReply = z.infer<typeof webhookReplySchema>;

/** A webhook channel's answer to a message it took: the turn runs, its reply follows. */
export const webhookAcceptedSchema = z.object({
  accepted: z.literal(true),
  conversationId: z.string().describe("conv_…: the conversation of the message's thread"),
});
