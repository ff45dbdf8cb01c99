import { upgradeWebSocket } from "@hono/node-server";
import type { Context } from "hono";
import { Hono } from "hono";
import type { WebSocket } from "ws";
import { SandboxLimitError } from "../../core/errors/index.js";
import { isExecId, isSandboxId } from "../../core/ids.js";
import {
  admitExecSocket,
  attachExecSocket,
  execSocketCount,
} from "../../sandbox/runner/exec/exec-socket.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import type { Caller } from "../store/projects.js";
import type { SandboxTokens } from "../store/sandbox-tokens.js";
import type { ProjectRepository } from "../store/store.js";
import type { SandboxAccess } from "./access.js";
import type { SandboxService } from "./service.js";
import { requireTokenOrigin } from "./token-origin.js";

const execPath = /^\/api\/sandboxes\/([^/]+)\/exec\/([^/]+)$/;

/** Whether the request asks to become a WebSocket. */
export function isUpgrade(c: Context): boolean {
  return c.req.header("upgrade")?.toLowerCase() === "websocket";
}

/**
 * The exec token (`?token=`, from POST or GET …/exec) as a way in, for browsers, which cannot
 * send headers with a WebSocket: it opens the WebSocket of its one exec, nothing else. One given
 * to a sandbox token works only while that token does, and from its Origin.
 */
export function execTokenCaller(
  service: SandboxService,
  projects: ProjectRepository,
  sandboxTokens: SandboxTokens,
): (c: Context) => Promise<Caller | string | undefined> {
  return async (c) => {
    const token = c.req.query("token");
    const [, sandboxId = "", execId = ""] = execPath.exec(c.req.path) ?? [];
    if (
      token === undefined ||
      !isSandboxId(sandboxId) ||
      !isExecId(execId) ||
      !isUpgrade(c) ||
      "unavailable" in service
    ) {
      return undefined;
    }
    const grant = service.tokens.verify(token);
    const valid = grant !== undefined && grant.sandboxId === sandboxId && grant.execId === execId;
    const project = valid ? await projects.byId(grant.projectId) : undefined;
    const parent =
      grant?.sandboxTokenId === undefined ? null : sandboxTokens.grantById(grant.sandboxTokenId);
    if (!valid || project === undefined || parent === undefined) {
      return "the token is not valid for this exec (or has expired, or the sandbox token it was given to has)";
    }
    requireTokenOrigin(c, parent?.origin ?? null);
    return {
      project,
      actor: `exec token (${grant.execId})`,
      ...(parent === null ? {} : { sandboxTokenId: parent.id }),
    };
  };
}

/**
 * The exec WebSocket, `GET /api/sandboxes/{id}/exec/{execId}` with `Upgrade: websocket`. It
 * goes through the app like every request (request id, auth, rate limits, shutdown); a refusal
 * is the API's status with `x-request-id`, and `?since=<offset>` re-attaches. Requests without
 * the upgrade go on to the exec's JSON state.
 */
export function execWebSocketRoutes(service: SandboxService, access: SandboxAccess) {
  const app = new Hono<{ Variables: AuthVariables }>();
  if ("unavailable" in service) return app;
  const { runner } = service;
  return app.get(
    "/api/sandboxes/:id/exec/:execId",
    upgradeWebSocket((c) => {
      if (!isUpgrade(c)) return {};
      const session = runner.execSession(
        c.get("project").id,
        c.req.param("id") ?? "",
        c.req.param("execId") ?? "",
      );
      const since = c.req.query("since");
      let offset: number | undefined;
      if (since !== undefined) {
        offset = Number(since);
        if (!Number.isSafeInteger(offset) || offset < 0) {
          throw new ApiError(
            "invalid_request",
            `since must be a byte offset, a whole number (got "${since}")`,
          );
        }
        if (offset > session.output.end) {
          throw new ApiError(
            "invalid_request",
            `since=${offset} is past the output (${session.output.end} bytes so far)`,
          );
        }
      }
      if (execSocketCount(session) >= runner.limits.socketsPerExec) {
        throw new SandboxLimitError(
          `exec ${session.execId} already has ${runner.limits.socketsPerExec} WebSockets following it, the most an exec may (sandboxes.limits.socketsPerExec); close one first`,
        );
      }
      const total = runner.execSocketTotal(execSocketCount);
      if (total >= runner.limits.sockets) {
        throw new SandboxLimitError(
          `the runner's execs already have ${total} WebSockets following them, the most it takes (sandboxes.limits.sockets); close some first`,
        );
      }
      admitExecSocket(session);
      // A sandbox token's socket closes when the token ends (revoked, expired).
      const tokenId = c.get("sandboxTokenId");
      const holder = tokenId === undefined ? undefined : access.tokens.grantById(tokenId);
      return {
        onOpen(_event, socket) {
          const raw = socket.raw as WebSocket;
          if (holder !== undefined) access.sockets.hold(holder.id, raw, holder.expiresAtMs);
          attachExecSocket(raw, session, offset);
        },
      };
    }),
  );
}
