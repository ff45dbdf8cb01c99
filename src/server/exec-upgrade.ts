import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { CairnError, SandboxLimitError } from "../core/errors/index.js";
import { attachExecSocket, execSocketCount } from "../sandbox/runner/exec/exec-socket.js";
import { errorStatuses } from "./http/api-error.js";
import { apiKeyOf } from "./http/auth.js";
import type { SandboxService } from "./routes/sandboxes.js";
import type { ProjectStore } from "./store/projects.js";

const execPath = /^\/api\/sandboxes\/(sbx_[0-9a-f]{24})\/exec\/(ex_[0-9a-f]{24})$/;

/**
 * The exec WebSocket, `GET /api/sandboxes/{id}/exec/{execId}` with `Upgrade: websocket`: the
 * API key in the headers as for every route, or `?token=` (from POST …/exec) for browsers;
 * `?since=<offset>` to re-attach. Refusals are HTTP answers with the API's error body.
 */
export function acceptExecSockets(
  server: Server,
  options: { projects: ProjectStore; sandboxes: SandboxService; isClosing: () => boolean },
): { close(): void } {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      const url = new URL(request.url ?? "/", "http://localhost");
      const match = execPath.exec(url.pathname);
      if (match === null) throw new CairnError("not_found", `no WebSocket at ${url.pathname}`);
      if (options.isClosing()) throw new CairnError("unavailable", "the server is shutting down");
      if ("unavailable" in options.sandboxes)
        throw new CairnError("unavailable", options.sandboxes.unavailable);
      const [, sandboxId, execId] = match as unknown as [string, string, string];
      const projectId = authorize(
        request,
        url,
        options.projects,
        options.sandboxes,
        sandboxId,
        execId,
      );
      const runner = options.sandboxes.runner;
      const session = runner.execSession(projectId, sandboxId, execId);
      if (execSocketCount(session) >= runner.limits.socketsPerExec) {
        throw new SandboxLimitError(
          `exec ${execId} already has ${runner.limits.socketsPerExec} WebSockets following it, the most an exec may (sandboxes.limits.socketsPerExec); close one first`,
        );
      }
      const since = url.searchParams.get("since");
      let offset: number | undefined;
      if (since !== null) {
        offset = Number(since);
        if (!Number.isInteger(offset) || offset < 0) {
          throw new CairnError(
            "invalid_request",
            `since must be a byte offset, a whole number (got "${since}")`,
          );
        }
        if (offset > session.output.end) {
          throw new CairnError(
            "invalid_request",
            `since=${offset} is past the output (${session.output.end} bytes so far)`,
          );
        }
      }
      sockets.handleUpgrade(request, socket, head, (webSocket) => {
        attachExecSocket(webSocket, session, offset);
      });
    } catch (error) {
      refuse(socket, error);
    }
  });
  return {
    close() {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
    },
  };
}

function authorize(
  request: IncomingMessage,
  url: URL,
  projects: ProjectStore,
  sandboxes: Extract<SandboxService, { runner: unknown }>,
  sandboxId: string,
  execId: string,
): string {
  const key = apiKeyOf((name) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  });
  if (key !== undefined) {
    const caller = projects.callerForKey(key);
    if (caller === undefined) throw new CairnError("unauthorized", "the API key is not valid");
    return caller.project.id;
  }
  const token = url.searchParams.get("token");
  if (token === null) {
    throw new CairnError(
      "unauthorized",
      "no API key: send X-API-Key (or Authorization: Bearer), or ?token= from POST /api/sandboxes/{id}/exec",
    );
  }
  const grant = sandboxes.tokens.verify(token);
  if (grant === undefined || grant.sandboxId !== sandboxId || grant.execId !== execId) {
    throw new CairnError("unauthorized", "the token is not valid for this exec (or has expired)");
  }
  return grant.projectId;
}

function refuse(socket: Duplex, error: unknown): void {
  const known = CairnError.isInstance(error) && error.code in errorStatuses;
  if (!known) console.error("cairn: an exec WebSocket failed to open:", error);
  const code = known ? (error as CairnError).code : "internal_error";
  const status = errorStatuses[code as keyof typeof errorStatuses];
  const message = known
    ? (error as CairnError).message
    : "the server failed to answer; the error is logged";
  const body = JSON.stringify({ error: code, message });
  const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
  socket.end(
    `HTTP/1.1 ${status} ${code.replace(/_/g, " ")}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${typeof retryAfter === "number" ? `retry-after: ${retryAfter}\r\n` : ""}connection: close\r\n\r\n${body}`,
  );
}
