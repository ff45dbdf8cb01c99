import { Hono } from "hono";
import { execRequestSchema, resolveExecRequest } from "../../core/wire/exec-request.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { ExecTokens } from "./exec-tokens.js";
import { parseInput, sandboxIdParam } from "./input.js";

/**
 * Execs of a sandbox: start one (answered with its id and a token for its WebSocket), list
 * them, read one. The WebSocket itself is exec-websocket.ts.
 */
export function execRoutes(runner: SandboxRunner, tokens: ExecTokens) {
  const app = new Hono<{ Variables: AuthVariables }>();
  return app
    .post("/api/sandboxes/:id/exec", async (c) => {
      const request = parseInput(execRequestSchema, await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      const session = await runner.exec(projectId, id, resolveExecRequest(request));
      const token = tokens.issue(projectId, id, session.execId, c.get("sandboxTokenId"));
      return c.json({ execId: session.execId, token }, 201);
    })
    .get("/api/sandboxes/:id/exec", (c) =>
      c.json({ execs: runner.execs(c.get("project").id, sandboxIdParam(c.req.param("id"))) }),
    )
    .get("/api/sandboxes/:id/exec/:execId", (c) => {
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      const session = runner.execSession(projectId, id, c.req.param("execId"));
      // A fresh token to attach with, for browsers.
      const token = tokens.issue(projectId, id, session.execId, c.get("sandboxTokenId"));
      return c.json({ ...session.record, token });
    });
}
