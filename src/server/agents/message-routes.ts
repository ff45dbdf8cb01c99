import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  type AgentStreamPart,
  agentMessageRequestSchema,
  conversationIdHeader,
  isConversationId,
} from "../../core/wire/agent-conversations.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import { parseInput } from "../sandboxes/input.js";
import type { ConversationScope, ConversationStore } from "./conversation-store.js";
import { type AgentStore, isAgentId } from "./store.js";
import type { AgentTurnService } from "./turns.js";

const listQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** A comment this often keeps a quiet reply (a long command) open through proxies. */
const heartbeatMs = 15_000;

const encoder = new TextEncoder();

/**
 * The conversations a request reaches: a web channel's token, those started with it (a new one
 * is started on its channel); the API key, all of the agent's.
 */
function scopeOf(c: Context<{ Variables: AuthVariables }>): ConversationScope | undefined {
  const channelId = c.get("agentWebChannelId");
  return channelId === undefined ? undefined : { type: "web", id: channelId };
}

/**
 * An agent's conversations: `POST /v1/agents/{id}/messages` (the reply as an AI SDK UI message
 * stream), the conversations and their messages, and stopping a conversation's turn. A web
 * channel's token reaches only its channel's conversations; any other is 404, as an unknown one.
 */
export function agentMessageRoutes(parts: {
  readonly store: Pick<AgentStore, "get">;
  readonly conversations: ConversationStore;
  readonly turns: AgentTurnService;
}) {
  const { store: agents, conversations, turns } = parts;
  const app = new Hono<{ Variables: AuthVariables }>();

  /** The agent of the path, or 400/404 naming what is wrong. */
  const agentOf = (projectId: string, id: string) => {
    if (!isAgentId(id)) {
      throw new ApiError(
        "invalid_request",
        `"${id}" is not an agent id; use the agt_… id that POST /v1/agents returned`,
      );
    }
    const agent = agents.get(projectId, id);
    if (agent === undefined) throw new ApiError("not_found", `this project has no agent ${id}`);
    return agent;
  };
  const conversationOf = (
    projectId: string,
    agentId: string,
    id: string,
    scope: ConversationScope | undefined,
  ) => {
    const conversation = isConversationId(id)
      ? conversations.get(projectId, agentId, id, scope)
      : undefined;
    if (conversation === undefined) {
      throw new ApiError("not_found", `agent ${agentId} has no conversation ${id}`);
    }
    return conversation;
  };

  return app
    .post("/v1/agents/:id/messages", async (c) => {
      const projectId = c.get("project").id;
      const agent = agentOf(projectId, c.req.param("id"));
      const body = parseInput(agentMessageRequestSchema, await readJson(c.req.raw));
      const controller = new AbortController();
      c.req.raw.signal.addEventListener("abort", () => controller.abort(), { once: true });
      const scope = scopeOf(c);
      const turn = turns.send({
        projectId,
        agentId: agent.id,
        content: body.content,
        signal: controller.signal,
        ...(scope === undefined ? {} : { channel: scope }),
        ...(body.conversationId === undefined ? {} : { conversationId: body.conversationId }),
        ...(body.attachments === undefined ? {} : { attachments: body.attachments }),
      });
      return uiMessageStreamResponse(turn.parts, controller, {
        [conversationIdHeader]: turn.conversationId,
      });
    })
    .get("/v1/agents/:id/conversations", (c) => {
      const projectId = c.get("project").id;
      const agent = agentOf(projectId, c.req.param("id"));
      const { limit } = parseInput(listQuerySchema, c.req.query());
      return c.json({
        conversations: conversations.list(projectId, agent.id, limit, scopeOf(c)),
      });
    })
    .get("/v1/agents/:id/conversations/:cid", (c) => {
      const projectId = c.get("project").id;
      const agent = agentOf(projectId, c.req.param("id"));
      const conversation = conversationOf(projectId, agent.id, c.req.param("cid"), scopeOf(c));
      return c.json({ ...conversation, messages: conversations.messages(conversation.id) });
    })
    .post("/v1/agents/:id/conversations/:cid/stop", (c) => {
      const projectId = c.get("project").id;
      const agent = agentOf(projectId, c.req.param("id"));
      const conversation = conversationOf(projectId, agent.id, c.req.param("cid"), scopeOf(c));
      return c.json({ stopped: turns.stop(conversation.id) });
    });
}

/**
 * The parts as an AI SDK UI message stream: `data: {json}` events, then `data: [DONE]`. The
 * client going away (the body cancelled) aborts `controller`, which stops the turn.
 */
function uiMessageStreamResponse(
  parts: AsyncIterable<AgentStreamPart>,
  controller: AbortController,
  headers: Record<string, string>,
): Response {
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      const send = (text: string) => {
        if (!controller.signal.aborted) stream.enqueue(encoder.encode(text));
      };
      timer = setInterval(() => send(": keep-alive\n\n"), heartbeatMs);
      timer.unref();
      void (async () => {
        try {
          for await (const part of parts) send(`data: ${JSON.stringify(part)}\n\n`);
          send("data: [DONE]\n\n");
          if (!controller.signal.aborted) stream.close();
        } catch (error) {
          if (!controller.signal.aborted) stream.error(error);
        } finally {
          clearInterval(timer);
        }
      })();
    },
    cancel() {
      clearInterval(timer);
      controller.abort();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
      "x-vercel-ai-ui-message-stream": "v1",
      ...headers,
    },
  });
}
