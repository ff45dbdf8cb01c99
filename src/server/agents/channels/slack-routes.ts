import { Hono } from "hono";
import { z } from "zod";
import { maxAgentMessageBytes } from "../../../core/wire/agent-conversations.js";
import { ApiError } from "../../http/api-error.js";
import { parseInput } from "../../sandboxes/input.js";
import type { ChannelAnswer } from "./channel-turns.js";
import { parseSignedJson, signedRequest } from "./incoming.js";
import type { ChannelParts } from "./parts.js";
import { postSlackMessage } from "./replies.js";
import { verifySlackSignature } from "./signature.js";

/** The parts of an Events API request a channel reads; the rest is Slack's. */
const envelopeSchema = z.object({
  type: z.string({ error: "type must be Slack's request type" }),
  challenge: z.string().optional(),
  event_id: z.string().min(1).max(200).optional(),
  event: z
    .object({
      type: z.string(),
      subtype: z.unknown().optional(),
      bot_id: z.unknown().optional(),
      user: z.string().optional(),
      text: z.string().optional(),
      ts: z.string().optional(),
      thread_ts: z.string().optional(),
      channel: z.string().optional(),
    })
    .optional(),
});

type SlackEvent = NonNullable<z.infer<typeof envelopeSchema>["event"]>;

/** A person's message in a conversation: not a bot's (the agent's own replies among them), not an edit or a join. */
function personMessage(event: SlackEvent | undefined) {
  if (event === undefined || (event.type !== "message" && event.type !== "app_mention")) return;
  if (event.subtype !== undefined || (event.bot_id !== undefined && event.bot_id !== null)) return;
  const { user, text, ts, channel } = event;
  if (user === undefined || text === undefined || ts === undefined || channel === undefined) {
    return;
  }
  // An app_mention starts with the bot's own mention, which says nothing to the agent.
  const content = utf8Prefix(text.replace(/^\s*<@[A-Z0-9]+>\s*/, ""), maxAgentMessageBytes);
  return content.trim() === ""
    ? undefined
    : { content, ts, channel, threadTs: event.thread_ts ?? ts };
}

/** The longest start of `text` that is at most `bytes` of UTF-8, cut between characters. */
function utf8Prefix(text: string, bytes: number): string {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= bytes) return text;
  return new TextDecoder().decode(encoded.subarray(0, bytes)).replace(/\uFFFD$/, "");
}

/**
 * `POST /v1/channels/slack/{channelId}`, the Events API Request URL: every request signed with
 * the app's signing secret (v0); the URL verification answered; an event taken once by its
 * event_id (Slack's retries of it are answered and dropped); a person's message or mention
 * answered 200 at once, its turn run in the background in the conversation of its Slack thread,
 * and the reply posted in that thread with `chat.postMessage`.
 */
export function slackRoutes(parts: ChannelParts) {
  return new Hono().post("/v1/channels/slack/:channelId", async (c) => {
    const { channel, body } = await signedRequest(
      c,
      "slack",
      parts.channels,
      parts.failures,
      (secret, raw) =>
        verifySlackSignature(
          c.req.header("x-slack-signature"),
          c.req.header("x-slack-request-timestamp"),
          secret,
          raw,
        ),
    );
    const envelope = parseInput(envelopeSchema, parseSignedJson(body));
    if (envelope.type === "url_verification") {
      if (envelope.challenge === undefined) {
        throw new ApiError("invalid_request", "a url_verification request must carry a challenge");
      }
      return c.json({ challenge: envelope.challenge });
    }
    if (envelope.type !== "event_callback") return c.json({ ok: true });
    if (envelope.event_id === undefined) {
      throw new ApiError("invalid_request", "an event_callback request must carry its event_id");
    }
    // A retry (X-Slack-Retry-Num) or a replay of an event taken: acknowledged, not run again.
    if (!parts.channels.takeEvent(channel.id, `event:${envelope.event_id}`)) {
      return c.json({ ok: true });
    }
    const message = personMessage(envelope.event);
    // One message comes as both `message` and `app_mention` when the app subscribes to both.
    if (
      message === undefined ||
      !parts.channels.takeEvent(channel.id, `message:${message.channel}:${message.ts}`)
    ) {
      return c.json({ ok: true });
    }
    const reply = (answer: Omit<ChannelAnswer, "conversationId">, signal: AbortSignal) => {
      const text =
        answer.error === undefined ? answer.text : `The agent could not answer: ${answer.error}`;
      if (text === "") return Promise.resolve();
      return postSlackMessage(
        channel,
        parts.vault,
        { channel: message.channel, thread_ts: message.threadTs, text },
        parts.replies,
        signal,
      );
    };
    try {
      parts.turns.start(
        {
          projectId: channel.projectId,
          agentId: channel.agentId,
          channel: {
            type: "slack",
            id: channel.id,
            thread: `${message.channel}:${message.threadTs}`,
          },
          content: message.content,
        },
        reply,
      );
    } catch (error) {
      // Slack must have its 200 all the same, or it sends the event again; the thread is told.
      if (!ApiError.isInstance(error)) throw error;
      void reply({ text: "", error: error.message }, AbortSignal.timeout(60_000));
    }
    return c.json({ ok: true });
  });
}
