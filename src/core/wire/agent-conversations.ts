import { z } from "zod";
import { randomHex } from "../ids.js";

// An agent's conversations (issue 15): the body of `POST /v1/agents/{id}/messages`, the parts
// of the reply it streams (the Vercel AI SDK UI message stream, as CairnChat reads it), and the
// stored conversations `GET /v1/agents/{id}/conversations[/{cid}]` return.

const conversationIdPattern = /^conv_[0-9a-f]{24}$/;

/** A new conversation id: `conv_` + 24 hex. */
export function newConversationId(): string {
  return `conv_${randomHex(12)}`;
}

/** Whether `input` is a conversation id as {@link newConversationId} makes them. */
export function isConversationId(input: string): boolean {
  return conversationIdPattern.test(input);
}

/** A new stored message id: `msg_` + 24 hex. */
export function newAgentMessageId(): string {
  return `msg_${randomHex(12)}`;
}

/** The longest message content, in bytes of UTF-8. */
export const maxAgentMessageBytes = 32 * 1024;
/** The most attachments one message carries. */
export const maxAgentAttachments = 10;

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/** A file given with a message: a link the model reads (an image) or is told of. */
export const agentAttachmentSchema = z.strictObject({
  name: z.string().min(1, "an attachment needs a name").max(255),
  mediaType: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i,
      "must be a media type such as image/png",
    ),
  url: z
    .string()
    .max(8 * 1024 * 1024, "an attachment's url is over 8 MiB")
    .regex(/^(https?:\/\/[^\s]+|data:[^\s]*)$/, "must be an http(s) URL or a data: URL"),
});
export type AgentAttachment = z.infer<typeof agentAttachmentSchema>;

/** `POST /v1/agents/{id}/messages`. */
export const agentMessageRequestSchema = z.strictObject({
  /** Continue this conversation; without it, a new one starts. */
  conversationId: z
    .string()
    .regex(conversationIdPattern, "must be a conv_… id that an earlier reply gave")
    .optional(),
  content: z
    .string()
    .min(1, "content is empty: send the message's text")
    .refine(
      (text) => utf8Length(text) <= maxAgentMessageBytes,
      `content is over ${maxAgentMessageBytes / 1024} KiB (${maxAgentMessageBytes} bytes of UTF-8)`,
    ),
  attachments: z
    .array(agentAttachmentSchema)
    .max(maxAgentAttachments, `at most ${maxAgentAttachments} attachments`)
    .optional(),
});
export type AgentMessageRequest = z.infer<typeof agentMessageRequestSchema>;

/** The header of the reply that names its conversation (also in the `start` part's metadata). */
export const conversationIdHeader = "x-cairn-conversation-id";

// ---------------------------------------------------------------------------------------------
// The stream: AI SDK UI message stream parts, as `data: {json}` lines, then `data: [DONE]`
// ---------------------------------------------------------------------------------------------

/**
 * Why a turn ended early. upstream_4xx: the model endpoint refused the request (a wrong key, an
 * unknown model; `status` is its status). transient: the model endpoint failed or could not be
 * reached (5xx, a timeout), or the agent's process stopped; retrying may work. aborted: the turn
 * was stopped (`…/stop`, or the client went away). other: anything else.
 */
export type AgentTurnErrorKind = "upstream_4xx" | "transient" | "aborted" | "other";

/**
 * The data part that says why a turn ended early, sent just before its `error` part (or its
 * `abort` part), and kept as the last part of the stored assistant message.
 */
export const turnErrorPartType = "data-turn-error";

export interface AgentTurnError {
  readonly kind: AgentTurnErrorKind;
  readonly message: string;
  /** The model endpoint's status, for upstream_4xx (and a 5xx). */
  readonly status?: number;
}

/** What the `start` and `finish` parts carry as `messageMetadata`. */
export interface AgentReplyMetadata {
  readonly conversationId: string;
  /** The turn's trace: `tr_` + 32 hex. */
  readonly traceId: string;
}

/** One part of a reply's stream: the AI SDK UI message stream parts an agent sends. */
export type AgentStreamPart =
  | {
      readonly type: "start";
      readonly messageId: string;
      readonly messageMetadata: AgentReplyMetadata;
    }
  | { readonly type: "start-step" }
  | { readonly type: "finish-step" }
  | { readonly type: "text-start"; readonly id: string }
  | { readonly type: "text-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "text-end"; readonly id: string }
  | { readonly type: "reasoning-start"; readonly id: string }
  | { readonly type: "reasoning-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "reasoning-end"; readonly id: string }
  | {
      readonly type: "tool-input-available";
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
    }
  | {
      readonly type: "tool-output-available";
      readonly toolCallId: string;
      readonly output: unknown;
    }
  | { readonly type: "tool-output-error"; readonly toolCallId: string; readonly errorText: string }
  | { readonly type: typeof turnErrorPartType; readonly data: AgentTurnError }
  | { readonly type: "finish"; readonly messageMetadata: AgentReplyMetadata }
  | { readonly type: "error"; readonly errorText: string }
  | { readonly type: "abort" };

// ---------------------------------------------------------------------------------------------
// Stored conversations
// ---------------------------------------------------------------------------------------------

const toolPartSchema = z.object({
  type: z.literal("dynamic-tool"),
  toolCallId: z.string(),
  toolName: z.string(),
  state: z.enum(["input-available", "output-available", "output-error"]),
  input: z.unknown(),
  output: z.unknown().optional(),
  errorText: z.string().optional(),
});

/** A part of a stored message, in the AI SDK's UIMessage shapes (CairnChat's ChatMessagePart). */
export const agentMessagePartSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("reasoning"), text: z.string() }),
  z.object({ type: z.literal("step-start") }),
  toolPartSchema,
  z.object({
    type: z.literal("file"),
    mediaType: z.string(),
    url: z.string(),
    filename: z.string().optional(),
  }),
  z.object({
    type: z.literal(turnErrorPartType),
    data: z.object({
      kind: z.enum(["upstream_4xx", "transient", "aborted", "other"]),
      message: z.string(),
      status: z.number().int().optional(),
    }),
  }),
]);
export type AgentMessagePart = z.infer<typeof agentMessagePartSchema>;

/** A message of a conversation, as `GET …/conversations/{cid}` returns it. */
export const agentMessageSchema = z.object({
  id: z.string().describe("msg_ + 24 hex"),
  role: z.enum(["user", "assistant"]),
  parts: z.array(agentMessagePartSchema),
  createdAt: z.string(),
  /** The turn's trace, on an assistant message. */
  traceId: z.string().optional(),
});
export type AgentMessage = z.infer<typeof agentMessageSchema>;

const channelRefSchema = z.object({
  type: z.enum(["web", "webhook", "slack"]),
  id: z.string(),
});

/** A conversation in `GET …/conversations`. */
export const agentConversationSummarySchema = z.object({
  id: z.string().describe("conv_ + 24 hex"),
  /** The start of its first message. */
  title: z.string(),
  /** The channel it came through, when not the API. */
  channel: channelRefSchema.optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
});
export type AgentConversationSummary = z.infer<typeof agentConversationSummarySchema>;

/** `GET /v1/agents/{id}/conversations`, newest first. */
export const agentConversationListSchema = z.object({
  conversations: z.array(agentConversationSummarySchema),
});

/** `GET /v1/agents/{id}/conversations/{cid}`, its messages oldest first. */
export const agentConversationSchema = agentConversationSummarySchema.extend({
  messages: z.array(agentMessageSchema),
});
export type AgentConversation = z.infer<typeof agentConversationSchema>;

/** `POST /v1/agents/{id}/conversations/{cid}/stop`: whether a turn was running and is stopped. */
export const agentConversationStopSchema = z.object({ stopped: z.boolean() });
