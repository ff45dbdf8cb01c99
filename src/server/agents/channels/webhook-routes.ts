import { Hono } from "hono";
import { webhookMessageSchema } from "../../../core/wire/agent-channels.js";
import { parseInput } from "../../sandboxes/input.js";
import { parseSignedJson, refuseReplay, signedRequest } from "./incoming.js";
import type { ChannelParts } from "./parts.js";
import { sendWebhookReply } from "./replies.js";
import { cairnSignatureHeader, verifyCairnSignature } from "./signature.js";

/**
 * `POST /v1/channels/webhook/{channelId}`: a message signed with the channel's secret
 * (`cairn-signature`), taken once per id; answered 202 with its conversation at once, while the
 * turn runs, and the reply POSTed to the callback URL, signed the same way.
 */
export function webhookRoutes(parts: ChannelParts) {
  return new Hono().post("/v1/channels/webhook/:channelId", async (c) => {
    const { channel, secret, body } = await signedRequest(
      c,
      "webhook",
      parts.channels,
      parts.failures,
      (key, raw) => verifyCairnSignature(c.req.header(cairnSignatureHeader), key, raw),
    );
    const message = parseInput(webhookMessageSchema, parseSignedJson(body));
    const eventId = `message:${message.id}`;
    if (!parts.channels.takeEvent(channel.id, eventId)) await refuseReplay(c, parts.failures);
    const thread = message.thread ?? message.id;
    let conversationId: string;
    try {
      conversationId = parts.turns.start(
        {
          projectId: channel.projectId,
          agentId: channel.agentId,
          channel: { type: "webhook", id: channel.id, thread },
          content: message.text,
        },
        (answer, signal) =>
          sendWebhookReply(
            channel,
            secret,
            { thread, inReplyTo: message.id, ...answer },
            parts.replies,
            signal,
          ),
      );
    } catch (error) {
      // The turn never started: the sender may send the same id again.
      parts.channels.forgetEvent(channel.id, eventId);
      throw error;
    }
    return c.json({ accepted: true, conversationId }, 202);
  });
}
