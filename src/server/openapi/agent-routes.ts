import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  agentListSchema,
  agentLogLineSchema,
  agentLogsSchema,
  agentRecordSchema,
  createAgentRequestSchema,
  updateAgentRequestSchema,
} from "../../core/wire/agents.js";
import { agentLogsQuerySchema } from "../agents/routes.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const body = (schema: z.ZodType) => ({
  body: { content: { "application/json": { schema } } },
});
const agent = z.object({ id: z.string().describe("agt_ + 24 hex") });
// The tags' schema checks its keys in code the document cannot show: described instead.
const tags = z
  .record(z.string(), z.string())
  .describe(
    "as a sandbox's: up to 50 keys of 1-63 letters, digits, _ . - / (starting with a letter or digit) and values up to 256 characters; the agent's sandbox also gets agent: <name>",
  );
const createRequest = createAgentRequestSchema.extend({ tags: tags.optional() });
const updateRequest = updateAgentRequestSchema.extend({ tags: tags.optional() });

const lifecycle =
  "The agent's core runs in a sandbox of its own (the agent's secret store, template, sizes and tags, plus the tag agent: <name>), its /workspace kept across restarts of the process, stops and starts, and restarts of the service. States: starting (sandbox, Node check, packages, core), ready, crashed (lastError says why; restarted after 1 s, doubling to 60 s, unless trying again cannot help: no Node ≥ 20 in the template, a package that cannot be installed or exports no valid tool; POST …/start tries again), stopped. restarts counts the restarts after a crash.";

/** The agents' record and process routes of the OpenAPI document. */
export function agentRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  const unavailable = {
    503: json(
      z.object({ error: z.literal("sandbox_unavailable"), message: z.string() }),
      "sandbox_unavailable: sandboxes cannot run on this service, with the reason",
    ),
  };
  return [
    {
      method: "post",
      path: "/v1/agents",
      summary: "Create an agent: its core starts in a sandbox of its own",
      description: `Answers at once with the record in state starting; the sandbox is made, the packages installed (with npm from the service's registry, reachable from the sandbox for that step only) and the core started in the background. secretStore defaults to model.apiKey's store; the store must exist (404), hold the key (400) and allow the model's host (400). Without a store the agent reaches its model's host and nothing else, and the model is called without Authorization. A name the project has already: 409. ${lifecycle}`,
      request: body(createRequest),
      responses: {
        201: json(agentRecordSchema, "the agent, state starting"),
        ...errors("invalid_request", "not_found", "conflict", "unsupported_media_type"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "get",
      path: "/v1/agents",
      summary: "The project's agents",
      responses: { 200: json(agentListSchema, "the agents"), ...common, ...unavailable },
    },
    {
      method: "get",
      path: "/v1/agents/{id}",
      summary: "One agent: its configuration, state, sandbox, restarts, last error and tools",
      request: { params: agent },
      responses: {
        200: json(agentRecordSchema, "the agent"),
        ...errors("invalid_request", "not_found"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "patch",
      path: "/v1/agents/{id}",
      summary: "Change an agent's instructions, model or tags",
      description:
        "New instructions start the core again in the same sandbox; a new model starts it in a new sandbox (what it may reach changed); tags apply to its running sandbox at once. The model's key must be in the agent's secret store, which cannot change. Any other key is a 400.",
      request: { params: agent, ...body(updateRequest) },
      responses: {
        200: json(agentRecordSchema, "the agent"),
        ...errors("invalid_request", "not_found", "unsupported_media_type"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "delete",
      path: "/v1/agents/{id}",
      summary: "Stop an agent and delete it with its workspace, conversations and channels",
      description:
        "On several instances sharing a database, an agent whose instance is gone (no heartbeat, and found so by the others: it reads as crashed) is deleted through any other, and its name is free at once; that instance, if it starts again with its data directory, stops and deletes its own record of it. Before the others find it gone, 503 `runner_unavailable` or 409 `agent_not_ready`.",
      request: { params: agent },
      responses: {
        204: { description: "deleted" },
        ...errors("invalid_request", "not_found", "agent_not_ready"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "post",
      path: "/v1/agents/{id}/stop",
      summary: "Stop the agent's process and sandbox, keeping its workspace",
      request: { params: agent },
      responses: {
        200: json(agentRecordSchema, "the agent, state stopped"),
        ...errors("invalid_request", "not_found"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "post",
      path: "/v1/agents/{id}/start",
      summary: "Start a stopped or crashed agent again, on its kept workspace",
      description: "A running or starting agent is left as it is.",
      request: { params: agent },
      responses: {
        200: json(agentRecordSchema, "the agent, state starting"),
        ...errors("invalid_request", "not_found"),
        ...common,
        ...unavailable,
      },
    },
    {
      method: "get",
      path: "/v1/agents/{id}/logs",
      summary: "The agent's log: its core's stderr and what the service did",
      description:
        "The last 2,000 lines are kept per agent, in memory. Without follow: the last `tail` lines (default 200). With follow=1: text/event-stream, the last `tail` lines then each new one, each event `data: {time, stream, line}` with an increasing id; send the last id as Last-Event-ID to resume. A comment every 15 s keeps it open; a client that leaves 1 MiB unread is disconnected; deleting the agent or shutting the service down ends it.",
      request: { params: agent, query: agentLogsQuerySchema },
      responses: {
        200: {
          description: "the lines, or with follow=1 the event stream",
          content: {
            "application/json": { schema: agentLogsSchema },
            "text/event-stream": { schema: agentLogLineSchema },
          },
        },
        ...errors("invalid_request", "not_found"),
        ...common,
        ...unavailable,
      },
    },
  ];
}
