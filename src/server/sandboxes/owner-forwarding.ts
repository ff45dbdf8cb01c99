import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { createProxyServer } from "http-proxy-3";
import { SandboxUnavailableError } from "../../core/errors/index.js";
import { isSandboxId } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import { toApiError } from "../http/api-error.js";
import type { SandboxLocation } from "../store/postgres/sandbox-directory.js";

/** Set on a request one instance forwards to another: the receiver never forwards it again. */
export const forwardedHeader = "x-cairn-forwarded-by";

/** How long forwarding waits to connect to the instance that runs a sandbox. */
const connectTimeoutMs = 5000;

export interface OwnerForwarding {
  /** This instance's runner id now. */
  readonly runnerId: () => string;
  /** Whether this instance's own file has the sandbox (running or not). */
  readonly isLocal: (sandboxId: string) => boolean;
  /** Where a sandbox runs, from the shared directory. */
  readonly locate: (sandboxId: string) => Promise<SandboxLocation | undefined>;
}

/**
 * Sends every request for a sandbox that another live instance runs (`/api/sandboxes/{id}…`,
 * its exec WebSockets included) to that instance, as it came: method, path, headers and body
 * streamed both ways. The instance that runs the sandbox authenticates the request itself — its
 * sandbox tokens, exec tokens and signed URLs are its own — so forwarding happens before this
 * instance's middleware, and trusts nothing of the request. A request whose sandbox is here, is
 * unknown, or whose runner is gone is served here as usual (a gone runner's sandbox reads as
 * failed). A forwarded request is never forwarded again.
 *
 * The server's own `request` and `upgrade` listeners (the app's) are taken off and called by
 * this one for what stays here.
 */
export function forwardToOwners(server: Server, forwarding: OwnerForwarding): void {
  const proxy = createProxyServer({ ws: true, xfwd: false, connectTimeout: connectTimeoutMs });
  const onRequest = server.listeners("request") as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  const onUpgrade = server.listeners("upgrade") as Array<
    (req: IncomingMessage, socket: Duplex, head: Buffer) => void
  >;
  server.removeAllListeners("request");
  server.removeAllListeners("upgrade");

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void ownerOf(req, forwarding).then((owner) => {
      if (owner === undefined) {
        for (const listener of onRequest) listener.call(server, req, res);
        return;
      }
      proxy.web(
        req,
        res,
        { target: owner.url, headers: { [forwardedHeader]: forwarding.runnerId() } },
        (error) => {
          answerUnreachable(res, owner, error);
        },
      );
    });
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void ownerOf(req, forwarding).then((owner) => {
      if (owner === undefined) {
        for (const listener of onUpgrade) listener.call(server, req, socket, head);
        return;
      }
      proxy.ws(
        req,
        socket,
        head,
        { target: owner.url, headers: { [forwardedHeader]: forwarding.runnerId() } },
        (error) => answerUnreachable(socket, owner, error),
      );
    });
  });
}

/** The live instance, other than this one, that runs the request's sandbox; else undefined. */
async function ownerOf(
  req: IncomingMessage,
  forwarding: OwnerForwarding,
): Promise<(SandboxLocation & { sandboxId: string }) | undefined> {
  if (req.headers[forwardedHeader] !== undefined) return undefined;
  const sandboxId = /^\/api\/sandboxes\/([^/?#]+)/.exec(req.url ?? "")?.[1];
  if (sandboxId === undefined || !isSandboxId(sandboxId) || forwarding.isLocal(sandboxId)) {
    return undefined;
  }
  try {
    const location = await forwarding.locate(sandboxId);
    if (location === undefined || !location.live || location.runnerId === forwarding.runnerId()) {
      return undefined;
    }
    return { ...location, sandboxId };
  } catch (error) {
    // The shared database out of reach: this instance answers (its own checks say so too).
    log.warn(`could not look up where sandbox ${sandboxId} runs: ${(error as Error).message}`);
    return undefined;
  }
}

/** The runners whose unreachability was logged (ids are new at each start: this stays small). */
const unreachableSaid = new Set<string>();

/** 503 with the API's error body: the instance that runs the sandbox does not answer. */
function answerUnreachable(
  to: ServerResponse | Duplex,
  owner: SandboxLocation & { sandboxId: string },
  error: Error,
): void {
  // Once per instance: until it is found gone, every request for its sandboxes fails alike.
  if (!unreachableSaid.has(owner.runnerId)) {
    unreachableSaid.add(owner.runnerId);
    log.warn(
      `could not forward requests for sandboxes of the instance at ${owner.url} (sandbox ${owner.sandboxId}): ${error.message}; they are answered 503 until it answers or is found gone`,
    );
  }
  const apiError = toApiError(
    new SandboxUnavailableError({
      reason: "runner_unavailable",
      sandboxId: owner.sandboxId,
      detail: `it runs on another instance of the service, ${owner.url}, which does not answer; if that instance is gone, the sandbox is marked failed`,
    }),
  );
  const body = JSON.stringify({
    error: apiError?.code,
    message: apiError?.message,
    ...apiError?.details,
  });
  if ("writeHead" in to) {
    if (to.headersSent) {
      to.destroy();
      return;
    }
    to.writeHead(503, { "content-type": "application/json", "retry-after": "5" });
    to.end(body);
    return;
  }
  if (!to.writable) {
    to.destroy();
    return;
  }
  to.end(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
