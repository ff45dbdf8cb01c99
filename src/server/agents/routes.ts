import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { eventStreamResponse } from "../http/event-stream.js";
import { readJson } from "../http/read-json.js";
import { parseInput } from "../sandboxes/input.js";
import { checkCreate, checkPatch } from "./agent-checks.js";
import type { AgentService } from "./service.js";
import { agentRecord, isAgentId, newAgentId, type StoredAgent } from "./store.js";
import { agentNotReadyError } from "./turns.js";

const flag = z
  .enum(["1", "0", "true", "false"], { error: "follow is 1 or 0 (true or false)" })
  .transform((value) => value === "1" || value === "true");

export const agentLogsQuerySchema = z.strictObject({
  follow: flag.default(false),
  tail: z.coerce
    .number({ error: "tail is a number of lines" })
    .int("tail is a whole number of lines")
    .min(0, "tail is 0 to 2000 lines")
    .max(2000, "tail is 0 to 2000 lines")
    .default(200),
});

/** What a client may leave unread of a followed log before it is cut off. */
const unreadLimitBytes = 1024 * 1024;

/**
 * `/v1/agents`: agents' records and their processes (create, list, show, change, delete, stop,
 * start, logs). Answers 503 with the reason on a service whose sandboxes cannot run.
 */
export function agentRoutes(service: AgentService, abortResponse: (c: Context) => void) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const guard = async (_c: unknown, next: () => Promise<void>) => {
    if ("unavailable" in service) {
      throw new ApiError(
        "sandbox_unavailable",
        `agents cannot run here: each runs in a sandbox, and ${service.unavailable}`,
        {
          status: 503,
          details: { reason: "runner_unavailable", detail: service.unavailable },
        },
      );
    }
    await next();
  };
  app.use("/v1/agents", guard);
  app.use("/v1/agents/*", guard);
  if ("unavailable" in service) return app;
  const { store, supervisor, logs, shared } = service;
  // An agent that another instance runs, when the request was not forwarded there (that
  // instance is gone): its record from the shared directory, work on it refused, and a delete
  // done here.
  const elsewhere = async (c: Context<{ Variables: AuthVariables }>, next: () => Promise<void>) => {
    const id = c.req.param("id") ?? "";
    const project = c.get("project") as AuthVariables["project"] | undefined;
    if (shared === undefined || project === undefined || !isAgentId(id)) return await next();
    if (store.get(project.id, id) !== undefined) return await next();
    const found = await shared.directory.get(project.id, id);
    if (found === undefined) return await next();
    const itself = c.req.path === `/v1/agents/${id}`;
    if (c.req.method === "GET" && itself) return c.json(agentRecord(found.agent));
    // Deleted here while its instance is gone, which deletes its own record when it is back.
    if (
      c.req.method === "DELETE" &&
      itself &&
      (await shared.directory.removeGone(project.id, id))
    ) {
      return c.body(null, 204);
    }
    throw found.live ? notForwardedError(id) : agentNotReadyError(found.agent);
  };
  app.use("/v1/agents/:id", elsewhere);
  app.use("/v1/agents/:id/*", elsewhere);

  const context = (c: Context<{ Variables: AuthVariables }>) => ({
    projectId: c.get("project").id,
    templates: service.templates,
    secretStores: service.secretStores,
    diskRangeMB: service.diskRangeMB,
  });
  const agentOf = (c: Context<{ Variables: AuthVariables }>): StoredAgent => {
    const id = c.req.param("id") ?? "";
    if (!isAgentId(id)) {
      throw new ApiError(
        "invalid_request",
        `"${id}" is not an agent id; use the agt_… id that POST /v1/agents returned`,
      );
    }
    const agent = store.get(c.get("project").id, id);
    if (agent === undefined) throw new ApiError("not_found", `this project has no agent ${id}`);
    return agent;
  };
  const recordOf = (agent: StoredAgent) => {
    const current = store.get(agent.projectId, agent.id);
    if (current === undefined)
      throw new ApiError("not_found", `this project has no agent ${agent.id}`);
    return agentRecord(current);
  };

  return app
    .post("/v1/agents", async (c) => {
      const { name, config } = await checkCreate(context(c), await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const taken = new ApiError(
        "conflict",
        `this project has an agent named "${name}" already; choose another name, or change that one with PATCH /v1/agents/{id}`,
      );
      const given = { id: newAgentId(), createdAt: new Date().toISOString() };
      // On a shared database the name is reserved for every instance first.
      if (shared !== undefined) {
        const reservation: StoredAgent = {
          ...given,
          projectId,
          name,
          config,
          state: "starting",
          sandboxId: undefined,
          restarts: 0,
          lastError: undefined,
          tools: [],
          updatedAt: given.createdAt,
        };
        if (!(await shared.directory.reserve(shared.runnerId(), reservation))) throw taken;
      }
      const agent = store.insert(projectId, name, config, given);
      if (agent === undefined) {
        await shared?.directory.remove(given.id);
        throw taken;
      }
      logs.add(agent.id, "service", `created agent ${name}`);
      supervisor.start(projectId, agent.id);
      await shared?.settled();
      return c.json(recordOf(agent), 201);
    })
    .get("/v1/agents", async (c) => {
      const projectId = c.get("project").id;
      const agents =
        shared === undefined ? store.list(projectId) : await shared.directory.list(projectId);
      return c.json({ agents: agents.map(agentRecord) });
    })
    .get("/v1/agents/:id", (c) => c.json(recordOf(agentOf(c))))
    .patch("/v1/agents/:id", async (c) => {
      const agent = agentOf(c);
      const body = await readJson(c.req.raw);
      const config = await checkPatch(context(c), agent, body);
      store.setConfig(agent.projectId, agent.id, config);
      const before = agent.config;
      if (JSON.stringify(config.tags) !== JSON.stringify(before.tags) && agent.sandboxId) {
        await service.runner
          .setTags(agent.projectId, agent.sandboxId, { ...config.tags, agent: agent.name })
          .catch(() => undefined);
      }
      const modelChanged = JSON.stringify(config.model) !== JSON.stringify(before.model);
      if (modelChanged || config.instructions !== before.instructions) {
        await supervisor.restart(agent.projectId, agent.id, modelChanged);
      }
      await shared?.settled();
      return c.json(recordOf(agent));
    })
    .delete("/v1/agents/:id", async (c) => {
      const agent = agentOf(c);
      await supervisor.remove(agent.projectId, agent.id);
      store.delete(agent.projectId, agent.id);
      // Its name is free for every instance once this answers.
      await shared?.settled();
      return c.body(null, 204);
    })
    .post("/v1/agents/:id/stop", async (c) => {
      const agent = agentOf(c);
      await supervisor.stop(agent.projectId, agent.id);
      await shared?.settled();
      return c.json(recordOf(agent));
    })
    .post("/v1/agents/:id/start", async (c) => {
      const agent = agentOf(c);
      supervisor.start(agent.projectId, agent.id);
      await shared?.settled();
      return c.json(recordOf(agent));
    })
    .get("/v1/agents/:id/logs", (c) => {
      const agent = agentOf(c);
      const query = parseInput(agentLogsQuerySchema, c.req.query());
      const shown = ({ time, stream, line }: { time: string; stream: string; line: string }) => ({
        time,
        stream,
        line,
      });
      if (!query.follow) {
        return c.json({ lines: logs.lines(agent.id, query.tail).map(shown) });
      }
      const resumeFrom = Number(c.req.header("last-event-id"));
      const after = Number.isSafeInteger(resumeFrom) && resumeFrom > 0 ? resumeFrom : 0;
      return eventStreamResponse({
        unreadLimitBytes,
        heartbeatMs: 15_000,
        cut: () => abortResponse(c),
        follow(sink) {
          const send = (line: { id: number; time: string; stream: string; line: string }) =>
            sink.send({ id: line.id, event: "message", data: shown(line) });
          for (const line of logs.lines(agent.id, after > 0 ? 2000 : query.tail, after)) {
            send(line);
          }
          return logs.follow(agent.id, send, () => sink.end());
        },
      });
    });
}

/**
 * 503 for an agent that another live instance runs, asked here without being forwarded (the
 * shared database was out of reach when the request came, or it claimed to be forwarded).
 */
function notForwardedError(agentId: string): ApiError {
  return new ApiError(
    "sandbox_unavailable",
    `agent ${agentId} runs on another instance of the service, which this request did not reach; send it again`,
    { status: 503, details: { reason: "runner_unavailable" } },
  );
}
