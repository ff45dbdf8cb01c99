import { Hono } from "hono";
import { createSandboxTokenRequestSchema } from "../../core/wire/sandbox-access.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { SandboxAccess } from "./access.js";
import { parseInput, sandboxIdParam } from "./input.js";

/**
 * A sandbox's browser tokens: create one (its value shown this once), list them (never a
 * value), revoke one (at once). What a token may do is token-caller.ts.
 */
export function tokenRoutes(runner: SandboxRunner, { tokens, sockets }: SandboxAccess) {
  const app = new Hono<{ Variables: AuthVariables }>();
  return app
    .post("/api/sandboxes/:id/tokens", async (c) => {
      const request = parseInput(createSandboxTokenRequestSchema, await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      // Only for a sandbox that runs: a token of a stopped one would never work.
      runner.running(projectId, id);
      return c.json(tokens.create(projectId, id, request), 201);
    })
    .get("/api/sandboxes/:id/tokens", (c) => {
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      runner.get(projectId, id);
      return c.json({ tokens: tokens.list(projectId, id) });
    })
    .delete("/api/sandboxes/:id/tokens/:tokenId", (c) => {
      const projectId = c.get("project").id;
      const id = sandboxIdParam(c.req.param("id"));
      runner.get(projectId, id);
      const tokenId = c.req.param("tokenId");
      const revoked = tokens.revoke(projectId, id, tokenId);
      if (revoked === undefined) {
        throw new ApiError(
          "not_found",
          `sandbox ${id} has no token ${JSON.stringify(tokenId)}; GET /api/sandboxes/${id}/tokens lists them`,
        );
      }
      // At once: the exec WebSockets it holds open close too.
      sockets.closeAll(revoked.id);
      return c.json(revoked);
    });
}
