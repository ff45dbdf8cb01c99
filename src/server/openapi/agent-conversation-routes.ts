import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  agentConversationListSchema,
  agentConversationSchema,
  agentConversationStopSchema,
  agentMessageRequestSchema,
  conversationIdHeader,
} from "../../core/wire/agent-conversations.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const agent = z.object({ id: z.string().describe("agt_ + 24 hex") });
const conversation = agent.extend({ cid: z.string().describe("conv_ + 24 hex") });

const stream =
  "The reply is an AI SDK UI message stream (the protocol CairnChat's transport and the AI SDK's useChat read): Server-Sent Events, each `data: {json}` one part, then `data: [DONE]`. Parts: start {messageId, messageMetadata: {conversationId, traceId}}, start-step, text-start/-delta/-end, reasoning-start/-delta/-end, tool-input-available {toolCallId, toolName, input}, tool-output-available {toolCallId, output}, tool-output-error {toolCallId, errorText}, finish-step, finish {messageMetadata}. A turn that ends early sends data-turn-error {data: {kind, message, status?}} (kind upstream_4xx: the model endpoint refused the request, status is its status; transient: it failed or could not be reached, or the agent's process restarted; aborted: the turn was stopped; other: anything else, such as the sandbox's egress proxy refusing the call to the model's host, which it cannot resolve or may not reach, the message says so), then error {errorText}, or abort when stopped. run_command's stdout and stderr are each cut at 16 KiB. Closing the request stops the turn (a command it runs is killed).";

const stored =
  "The reply is stored as the assistant message when the turn ends, with what it showed: a turn stopped or failed midway keeps its parts, ending with the data-turn-error part, and adds only its streamed text to the history the model gets next (no tool call without its result). Each turn is a trace (the message's traceId): an agent span with the conversation as its session, llm spans with tokens and cost, tool spans, and under run_command's the exec's span with exit code, CPU and peak memory.";

/** The conversation routes of an agent in the OpenAPI document. */
export function agentConversationRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  const conflict = errors("conflict")["409"];
  return [
    {
      method: "post",
      path: "/v1/agents/{id}/messages",
      summary: "Send a message to an agent; the reply streams",
      description: `Without conversationId a new conversation starts; its id is in the ${conversationIdHeader} header and the start part. One turn at a time per conversation. ${stream} ${stored}`,
      request: {
        params: agent,
        body: { content: { "application/json": { schema: agentMessageRequestSchema } } },
      },
      responses: {
        200: {
          description: "the reply, as an AI SDK UI message stream",
          headers: {
            [conversationIdHeader]: {
              description: "the conversation",
              schema: { type: "string" },
            },
          },
          content: { "text/event-stream": { schema: z.string() } },
        },
        ...errors("invalid_request", "not_found", "unsupported_media_type"),
        409: {
          ...(conflict ?? json(z.object({}), "")),
          description:
            "conflict: the conversation is answering a message already; agent_not_ready: the agent is starting, crashed, stopped or restarting (the message says which)",
        },
        ...common,
      },
    },
    {
      method: "get",
      path: "/v1/agents/{id}/conversations",
      summary: "The agent's conversations, the most recently active first",
      description:
        "With an agent web token, only the conversations started with its channel: every other one (another web channel's, a webhook's, Slack's, the API key's) is 404 to it here and on …/messages, …/conversations/{cid} and …/stop, as an unknown one.",
      request: {
        params: agent,
        query: z.object({
          limit: z.number().int().min(1).max(1000).optional().describe("default 100"),
        }),
      },
      responses: {
        200: json(agentConversationListSchema, "the conversations"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/v1/agents/{id}/conversations/{cid}",
      summary: "A conversation and its messages, oldest first",
      description: `Messages' parts are the AI SDK UIMessage parts the reply built (text, reasoning, step-start, dynamic-tool, file, data-turn-error). ${stored}`,
      request: { params: conversation },
      responses: {
        200: json(agentConversationSchema, "the conversation"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/v1/agents/{id}/conversations/{cid}/stop",
      summary: "Stop the conversation's running turn",
      description:
        "The core is told to abort, a command the turn runs is killed, and the reply ends with data-turn-error (kind aborted) and abort. stopped is false when no turn was running.",
      request: { params: conversation },
      responses: {
        200: json(agentConversationStopSchema, "whether a turn was stopped"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
  ];
}
