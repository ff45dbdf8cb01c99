import { Agent, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent as TlsAgent } from "node:https";
import type { Duplex } from "node:stream";
import { createProxyServer } from "http-proxy-3";
import { SandboxUnavailableError } from "../../core/errors/index.js";
import { isSandboxId } from "../../core/ids.js";
import { log } from "../../core/logger.js";
import { toApiError } from "../http/api-error.js";
import type { ClientAddressOf } from "../http/client-address.js";
import type { SandboxLocation } from "../store/postgres/sandbox-directory.js";
import { forwardedForHeader, forwardedProofHeader, signedAddress } from "./forwarded-address.js";

/** Set on a request one instance forwards to another: the receiver never forwards it again. */
export const forwardedHeader = "x-cairn-forwarded-by";

/**
 * The runner a forwarded request was sent to: an instance that is not that runner was reached
 * at another's advertised URL (two instances advertising one URL, a load balancer's URL), and
 * says so rather than answering for a sandbox it does not run.
 */
export const forwardedToHeader = "x-cairn-forwarded-to";

/** How long forwarding waits to connect to the instance that runs a sandbox. */
const connectTimeoutMs = 5000;

/**
 * How long a forwarded request may go without a byte either way before it is given up: an
 * owner that accepts connections but no longer answers (stopped, frozen) would otherwise hold
 * the client forever. Event streams send a heartbeat every 15 s; no route is silent this long.
 */
const defaultIdleTimeoutMs = 120_000;

/** A kind of resource that runs on one instance, named by an id in its requests' paths. */
export interface OwnedResource {
  /** What it is called in messages: sandbox, agent, channel. */
  readonly name: string;
  /** The paths of its requests (as the router reads them): the first group is the id. */
  readonly path: RegExp;
  /** Whether a path's id is one of this kind's; any other is served here. */
  readonly isId: (id: string) => boolean;
  /** Whether this instance's own file has it (running or not). */
  readonly isLocal: (id: string) => boolean;
  /** Where it runs, from the shared directory. */
  readonly locate: (id: string) => Promise<SandboxLocation | undefined>;
  /** What becomes of it once its instance is found gone, for the 503's message. */
  readonly whenGone: string;
}

/** Sandboxes: `/api/sandboxes/{id}…`. */
export function sandboxResource(
  isLocal: OwnedResource["isLocal"],
  locate: OwnedResource["locate"],
): OwnedResource {
  return {
    name: "sandbox",
    path: /^\/api\/sandboxes\/([^/]+)/,
    isId: isSandboxId,
    isLocal,
    locate,
    whenGone: "the sandbox is marked failed",
  };
}

export interface OwnerForwarding {
  /** This instance's runner id now. */
  readonly runnerId: () => string;
  /** What is forwarded: the first whose path a request's matches decides. */
  readonly resources: readonly OwnedResource[];
  /** How long a forwarded request may be silent both ways; default 120 s. */
  readonly idleTimeoutMs?: number;
  /**
   * The key a forwarded request carries its client's address under (forwarded-address.ts);
   * without it, the owner counts the client's attempts against this instance's address.
   */
  readonly addressKey?: Buffer | undefined;
  /** Who sent a request (its peer, or the client a trusted proxy names); default its peer. */
  readonly clientAddress?: ClientAddressOf | undefined;
}

/** The resource a request names, and its id. */
interface Named {
  readonly resource: OwnedResource;
  readonly id: string;
}

/**
 * Sends every request for a resource that another live instance runs (a sandbox:
 * `/api/sandboxes/{id}…`, its exec WebSockets included; an agent; a channel) to that instance,
 * as it came: method, path, headers and body streamed both ways. The instance that runs it
 * authenticates the request itself — its sandbox tokens, exec tokens, signed URLs, agent web
 * tokens and channel secrets are its own — so forwarding happens before this instance's
 * middleware, and trusts nothing of the request. A request whose resource is here, is unknown,
 * or whose runner is gone is served here as usual (a gone runner's sandbox reads as failed, its
 * agent as crashed). A forwarded request is never forwarded again.
 *
 * The server's own `request` and `upgrade` listeners (the app's) are taken off and called by
 * this one for what stays here.
 */
export function forwardToOwners(server: Server, forwarding: OwnerForwarding): void {
  const idleTimeoutMs = forwarding.idleTimeoutMs ?? defaultIdleTimeoutMs;
  // Connections kept between instances: the owner then reads and drops a body it refused (a
  // 413 before the end of an upload) instead of closing on it, which lost its answer in the
  // reset; and no connection is opened per request.
  const agents = {
    "http:": new Agent({ keepAlive: true }),
    "https:": new TlsAgent({ keepAlive: true }),
  };
  const proxy = createProxyServer({
    ws: true,
    xfwd: false,
    connectTimeout: connectTimeoutMs,
    proxyTimeout: idleTimeoutMs,
  });
  // What the owner answered already, or upgraded: an error after that is not "unreachable".
  const answered = new WeakSet<IncomingMessage | Duplex>();
  proxy.on("proxyRes", (response, req, res) => {
    answered.add(req);
    // The connection to the owner is not the client's: the client's own is as it asked.
    delete response.headers.connection;
    delete response.headers["keep-alive"];
    // An answer cut off (the owner gone, or silent too long) is cut off here too, not left open.
    response.once("close", () => {
      if (!response.complete) res.destroy();
    });
  });
  proxy.on("proxyReqWs", (outgoing, _req, socket) => {
    // Until the owner answers the upgrade; an open WebSocket may be silent as long as it likes.
    outgoing.setTimeout(idleTimeoutMs, () =>
      outgoing.destroy(new Error(`no answer to the upgrade in ${idleTimeoutMs} ms`)),
    );
    outgoing.once("upgrade", () => answered.add(socket));
  });
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
      if ("misdirected" in owner) {
        answerUnavailable(res, owner.named, misdirected);
        return;
      }
      const agent = owner.url.startsWith("https:") ? agents["https:"] : agents["http:"];
      // Kept open whatever the client asked of its own connection to this instance.
      const headers = { ...headersTo(owner, forwarding, req), connection: "keep-alive" };
      const options = { target: owner.url, agent, headers };
      proxy.web(req, res, options, (error) => {
        // The owner answered (a 413 before it read the whole body, say): its answer stands.
        if (answered.has(req)) return;
        answerUnreachable(res, owner, error);
      });
    });
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void ownerOf(req, forwarding).then((owner) => {
      if (owner === undefined) {
        for (const listener of onUpgrade) listener.call(server, req, socket, head);
        return;
      }
      if ("misdirected" in owner) {
        answerUnavailable(socket, owner.named, misdirected);
        return;
      }
      proxy.ws(
        req,
        socket,
        head,
        { target: owner.url, headers: headersTo(owner, forwarding, req) },
        (error) => {
          // A WebSocket already open carries frames: it is cut, never answered with HTTP.
          if (answered.has(socket)) {
            socket.destroy();
            return;
          }
          answerUnreachable(socket, owner, error);
        },
      );
    });
  });
}

function headersTo(
  owner: SandboxLocation,
  forwarding: OwnerForwarding,
  req: IncomingMessage,
): Record<string, string> {
  const client = forwarding.clientAddress?.(req) ?? req.socket.remoteAddress;
  return {
    [forwardedHeader]: forwarding.runnerId(),
    [forwardedToHeader]: owner.runnerId,
    // Set here whatever the client sent under these names: only a proof of ours is believed.
    ...(forwarding.addressKey === undefined || client === undefined
      ? { [forwardedForHeader]: "", [forwardedProofHeader]: "" }
      : signedAddress(forwarding.addressKey, client)),
  };
}

const misdirected =
  "a request forwarded to the instance that runs it reached another instance: the URL that instance advertises (--advertise-url, CAIRN_ADVERTISE_URL) leads elsewhere";

/**
 * The live instance, other than this one, that runs the request's resource; else undefined. A
 * request forwarded here for another runner is `misdirected`.
 */
async function ownerOf(
  req: IncomingMessage,
  forwarding: OwnerForwarding,
): Promise<
  (SandboxLocation & { named: Named }) | { misdirected: true; named: Named | undefined } | undefined
> {
  const named = namedBy(req.url ?? "", forwarding.resources);
  if (req.headers[forwardedHeader] !== undefined) {
    const to = req.headers[forwardedToHeader];
    if (to === undefined || to === forwarding.runnerId()) return undefined;
    // Said once per runner, and only when the directory confirms it (anyone can send the
    // headers); the answer is the same either way, so it tells nothing of the resource.
    const location =
      named === undefined
        ? undefined
        : await named.resource.locate(named.id).catch(() => undefined);
    if (location?.runnerId === to && !misdirectedSaid.has(to)) {
      misdirectedSaid.add(to);
      log.error(
        `a request forwarded to the service instance of runner ${to} (${named?.resource.name} ${named?.id}) reached this one (runner ${forwarding.runnerId()}): the URL that instance advertises (--advertise-url, CAIRN_ADVERTISE_URL), ${location.url}, leads here; give each instance a URL that reaches it alone`,
      );
    }
    return { misdirected: true, named };
  }
  if (named === undefined || named.resource.isLocal(named.id)) return undefined;
  try {
    const location = await named.resource.locate(named.id);
    if (location === undefined || !location.live || location.runnerId === forwarding.runnerId()) {
      return undefined;
    }
    return { ...location, named };
  } catch (error) {
    // The shared database out of reach: this instance answers (its own checks say so too).
    log.warn(
      `could not look up where ${named.resource.name} ${named.id} runs: ${(error as Error).message}`,
    );
    return undefined;
  }
}

/**
 * The resource and id a request target names, as the app routes it: the server adapter
 * resolves dot segments (`%2e` too) and takes an absolute-form target's path, and the router
 * decodes the id; the proxy sends the target resolved alike. Reading the raw target instead
 * would forward `/api/sandboxes/{a}/../{b}` to a's instance, which would answer for b.
 */
function namedBy(target: string, resources: readonly OwnedResource[]): Named | undefined {
  let path: string;
  try {
    path = new URL(target.startsWith("/") ? `http://cairn.invalid${target}` : target).pathname;
  } catch {
    return undefined;
  }
  for (const resource of resources) {
    const segment = resource.path.exec(path)?.[1];
    if (segment === undefined) continue;
    let id: string;
    try {
      id = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    return resource.isId(id) ? { resource, id } : undefined;
  }
  return undefined;
}

/** The runners whose misdirected requests were logged (ids are new at each start). */
const misdirectedSaid = new Set<string>();

/** The runners whose unreachability was logged (ids are new at each start: this stays small). */
const unreachableSaid = new Set<string>();

/** 503 with the API's error body: the instance that runs the resource does not answer. */
function answerUnreachable(
  to: ServerResponse | Duplex,
  owner: SandboxLocation & { named: Named },
  error: Error,
): void {
  const { resource, id } = owner.named;
  // Once per instance: until it is found gone, every request for what it runs fails alike.
  if (!unreachableSaid.has(owner.runnerId)) {
    unreachableSaid.add(owner.runnerId);
    log.warn(
      `could not forward requests for what the instance at ${owner.url} runs (${resource.name} ${id}): ${error.message}; they are answered 503 until it answers or is found gone`,
    );
  }
  // The other instance's address is for the log: callers (not yet authenticated) get none.
  answerUnavailable(
    to,
    owner.named,
    `it runs on another instance of the service, which does not answer; if that instance is gone, ${resource.whenGone}`,
  );
}

function answerUnavailable(
  to: ServerResponse | Duplex,
  named: Named | undefined,
  detail: string,
): void {
  // A sandbox's 503 names it; an agent's or a channel's names it in the detail.
  const sandbox = named?.resource.name === "sandbox";
  const apiError = toApiError(
    new SandboxUnavailableError({
      reason: "runner_unavailable",
      sandboxId: sandbox ? named?.id : undefined,
      detail:
        sandbox || named === undefined ? detail : `${named.resource.name} ${named.id}: ${detail}`,
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
