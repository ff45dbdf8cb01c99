import { chmod, mkdir, rm } from "node:fs/promises";
import {
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { TLSSocket } from "node:tls";
import { log } from "../../../core/logger.js";
import { UnsealError } from "../secrets/seal.js";
import { type EgressHosts, vetTargetOrRefusal } from "./addresses.js";
import { sendAnswerBody } from "./answer-body.js";
import type { CertificateAuthority } from "./certificate-authority.js";
import { readClientHello } from "./client-hello.js";
import { allowedBy, isValidHost, normalizeHost } from "./host-pattern.js";
import type { EgressPolicySource, SandboxEgressPolicy } from "./policy.js";
import { scrubHeaders, scrubPatterns } from "./scrub.js";
import { placeholderInUrl, substituteHeaders } from "./substitute.js";
import { readIntoOneBuffer } from "./upstream-reads.js";

/** One request through a sandbox's proxy, as it is logged (never a secret's value). */
export interface EgressRecord {
  readonly sandboxId: string;
  readonly method: string;
  readonly host: string;
  readonly port: number;
  /** The status the sandbox got; for a tunnel, 200 once it was opened. */
  readonly status: number;
  readonly bytesOut: number;
  readonly bytesIn: number;
  /** Keys of the secrets put into the request. */
  readonly secrets: readonly string[];
  /** Why it was refused, when it was. */
  readonly refused?: string | undefined;
  /** When it began and ended, in ms since the epoch. */
  readonly startMs: number;
  readonly endMs: number;
}

export interface EgressProxyOptions {
  readonly sandboxId: string;
  readonly policyFor: EgressPolicySource;
  /** `--egress-host name=address:port`: names resolved to exactly that address. */
  readonly hosts: EgressHosts;
  /** Called once per request, when it ends. */
  readonly onRecord?: (record: EgressRecord) => void;
  /** Name resolution; default the system's (getaddrinfo). */
  readonly resolve?: (host: string) => Promise<string[]>;
  /** Intercepts TLS to hosts a secret may go to; without it, every tunnel passes as it is. */
  readonly authority?: CertificateAuthority;
  /** The certificates upstream TLS is verified against; default Node's root store. */
  readonly upstreamCa?: readonly string[];
}

/** A request that passed the checks: the policy it was judged by, and where it may go. */
interface Admitted {
  readonly policy: SandboxEgressPolicy;
  readonly address: { readonly address: string; readonly port: number };
}

/**
 * RFC 9209 error types, for the answers the proxy makes itself. Each carries
 * `proxy-status: cairn-egress; error=<type>`; an answer relayed from upstream gets
 * `cairn-egress; received-status=<status>` after whatever the upstream said, so that a client
 * (the agent core) tells the proxy's refusal from the server's answer by the last member.
 */
export type ProxyStatusError =
  | "http_request_denied"
  | "http_request_error"
  | "destination_not_found"
  | "destination_ip_prohibited"
  | "destination_unavailable"
  | "connection_refused"
  | "connection_timeout"
  | "connection_terminated"
  | "tls_certificate_error"
  | "proxy_internal_error";

/** The proxy's name in the Proxy-Status header. */
export const proxyStatusName = "cairn-egress";

function proxyStatus(error: ProxyStatusError): string {
  return `${proxyStatusName}; error=${error}`;
}

/** A refusal: the status and the text the sandbox gets, and its RFC 9209 error type. */
class Refusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly error: ProxyStatusError,
  ) {}
}

/** The RFC 9209 type of a failure to reach an upstream, from its error code. */
function upstreamError(error: NodeJS.ErrnoException): ProxyStatusError {
  const code = error.code ?? "";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ETIMEDOUT") return "connection_timeout";
  if (code === "ECONNRESET" || code === "EPIPE") return "connection_terminated";
  if (code.startsWith("ERR_TLS_") || code.includes("CERT")) return "tls_certificate_error";
  return "destination_unavailable";
}

const noStore =
  "this sandbox has no secret store, so it has no network access: create it with secretStore naming a store whose allowlist holds the hosts it needs";

/**
 * The egress proxy of one sandbox, on a Unix socket that the sandbox reaches through its relay
 * at 127.0.0.1 (native/cairn-relay.c). It takes absolute-URI HTTP requests and CONNECT, and lets
 * through only what the sandbox's policy allows: without a secret store, 407 to everything
 * before any lookup; a host off the allowlist, 403 before any lookup; a name is resolved here
 * and the connection goes to the public address it vetted. Placeholders in request headers
 * become their secrets for the secrets' hosts, and responses are scrubbed of every form of
 * every secret. CONNECT carries TLS only, whose ClientHello must name the CONNECT target.
 */
export class EgressProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly socketPath: string,
    private readonly handler: ProxyHandler,
  ) {
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
  }

  /** Serves the proxy on `socketPath` (its folder made 0711, the socket 0666 for the relay). */
  static async start(socketPath: string, options: EgressProxyOptions): Promise<EgressProxy> {
    await mkdir(dirname(socketPath), { recursive: true, mode: 0o711 });
    const server = createServer({ requestTimeout: 0, headersTimeout: 30_000 });
    const handler = new ProxyHandler(options);
    const proxy = new EgressProxy(server, socketPath, handler);
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      handler.forward(request, response).catch((error: unknown) => {
        log.warn(`egress proxy of ${options.sandboxId}: ${(error as Error).message}`);
        if (!response.headersSent) {
          response.writeHead(502, { "proxy-status": proxyStatus("proxy_internal_error") }).end();
        } else response.destroy();
      });
    });
    server.on("connect", (request: IncomingMessage, socket: Socket, head: Buffer) => {
      handler.tunnel(request, socket, head).catch((error: unknown) => {
        log.warn(`egress proxy of ${options.sandboxId}: ${(error as Error).message}`);
        socket.destroy();
      });
    });
    server.on("clientError", (_error, socket: Socket) => {
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 400 Bad Request\r\nproxy-status: ${proxyStatus("http_request_error")}\r\nconnection: close\r\n\r\n`,
        );
      } else socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    await chmod(socketPath, 0o666);
    return proxy;
  }

  /**
   * Lets the sandbox reach `hostPatterns` (allowlist entries, already checked) besides what its
   * secret store allows, also without a store, until the returned function is called. No
   * secret goes to them unless the secret's own hosts say so. Taking it back ends at once the
   * tunnels and requests in flight to hosts nothing else allows; the next request is refused.
   */
  allow(hostPatterns: readonly string[]): () => void {
    return this.handler.allow(hostPatterns);
  }

  /** Stops serving and ends every connection; removes the socket's folder. */
  async close(): Promise<void> {
    this.handler.close();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(dirname(this.socketPath), { recursive: true, force: true });
  }
}

class ProxyHandler {
  // Connections upstream are kept and reused, per sandbox: a second request to a host costs no
  // new handshake. TLS ones per host and vetted address, each verified for its host.
  private readonly plainAgent = readIntoOneBuffer(
    new HttpAgent({ keepAlive: true, maxSockets: 32 }),
  );
  private readonly tlsAgents = new Map<string, HttpsAgent>();
  /** Host patterns allowed for now on top of the policy (allow()), one entry per grant. */
  private readonly allowances = new Set<readonly string[]>();
  /** Tunnels and requests under way, ended when what admitted them is taken back. */
  private readonly open = new Set<{ host: string; port: number; end(): void }>();

  constructor(private readonly options: EgressProxyOptions) {}

  allow(hostPatterns: readonly string[]): () => void {
    const grant = [...hostPatterns];
    this.allowances.add(grant);
    return () => {
      if (!this.allowances.delete(grant)) return;
      // The grant is gone before anything is awaited: no request is admitted by it from now on.
      void this.endDisallowed();
    };
  }

  private allowed(): string[] {
    return [...this.allowances].flat();
  }

  /**
   * Ends what is under way to a host that neither the policy nor an allowance allows now. The
   * policy may take a while to read (a database); what is under way is looked at once it is
   * read, the allowances then too, and a policy that cannot be read allows nothing.
   */
  private async endDisallowed(): Promise<void> {
    let policyAllows: readonly string[];
    try {
      policyAllows = (await this.options.policyFor(this.options.sandboxId))?.allowlist ?? [];
    } catch {
      policyAllows = [];
    }
    const allowlist = [...policyAllows, ...this.allowed()];
    for (const each of [...this.open]) {
      if (!allowedBy(allowlist, each.host, each.port)) {
        this.open.delete(each);
        each.end();
      }
    }
  }

  /** Tracks a connection under way until `closed` settles. */
  private track(host: string, port: number, end: () => void, closed: Promise<unknown>): void {
    const entry = { host, port, end };
    this.open.add(entry);
    void closed.finally(() => this.open.delete(entry));
  }

  /** Closes the connections kept upstream. */
  close(): void {
    this.plainAgent.destroy();
    for (const agent of this.tlsAgents.values()) agent.destroy();
  }

  private tlsAgent(host: string, address: { address: string; port: number }): HttpsAgent {
    const key = `${host} ${address.address} ${address.port}`;
    let agent = this.tlsAgents.get(key);
    if (agent === undefined) {
      agent = readIntoOneBuffer(
        new HttpsAgent({
          keepAlive: true,
          maxSockets: 32,
          servername: host,
          ...(this.options.upstreamCa === undefined ? {} : { ca: [...this.options.upstreamCa] }),
        }),
      );
      this.tlsAgents.set(key, agent);
    }
    return agent;
  }

  /** An absolute-URI request: `GET http://host/path`. */
  async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const target = this.parseUrl(request.url ?? "");
    if (target instanceof Refusal) return this.refuse(response, method, "-", 0, target);
    const { url, host, port } = target;
    const allowed = await this.admit(method, host, port, request.url ?? "");
    if (allowed instanceof Refusal) return this.refuse(response, method, host, port, allowed);
    const path = `${url.pathname}${url.search}`;
    await this.relay(request, response, { host, port, hostHeader: url.host, path }, allowed, false);
  }

  /**
   * Sends a request on to the vetted address, its placeholders replaced, and its answer back
   * scrubbed. Over TLS (an intercepted tunnel) the upstream's certificate is verified against
   * the host the tunnel was opened for.
   */
  private async relay(
    request: IncomingMessage,
    response: ServerResponse,
    target: { host: string; port: number; hostHeader: string; path: string },
    allowed: Admitted,
    tls: boolean,
  ): Promise<void> {
    const startMs = Date.now();
    const method = request.method ?? "GET";
    const { host, port } = target;
    const { policy, address } = allowed;
    const substituted = substituteHeaders(request.headers, policy, host, port);
    if ("refused" in substituted) {
      const refusal = new Refusal(403, substituted.refused, "http_request_denied");
      return this.refuse(response, method, host, port, refusal);
    }
    const headers = { ...substituted.headers, host: target.hostHeader };
    // The response of a request that carried a secret is scrubbed: it must come uncompressed.
    if (substituted.used.length > 0) headers["accept-encoding"] = "identity";
    const patterns = scrubPatterns(policy);
    let bytesOut = 0;
    await new Promise<void>((resolve) => {
      const options = {
        host: address.address,
        port: address.port,
        method,
        path: target.path,
        headers,
        setHost: false,
      };
      const upstream = tls
        ? httpsRequest({ ...options, servername: host, agent: this.tlsAgent(host, address) })
        : httpRequest({ ...options, agent: this.plainAgent });
      this.track(
        host,
        port,
        () => {
          upstream.destroy();
          response.destroy();
        },
        new Promise((closed) => response.once("close", closed)),
      );
      upstream.on("response", (answer) => {
        const status = answer.statusCode ?? 502;
        const answerHeaders = scrubHeaders(answer.headers, patterns);
        answerHeaders["proxy-status"] = [
          ...(answer.headers["proxy-status"] === undefined ? [] : [answer.headers["proxy-status"]]),
          `${proxyStatusName}; received-status=${status}`,
        ].join(", ");
        // A scrubbed body may change length: it goes out chunked.
        if (patterns.length > 0) delete answerHeaders["content-length"];
        response.writeHead(status, answerHeaders);
        void sendAnswerBody(answer, response, patterns).then((bytesIn) => {
          this.record({
            method,
            host,
            port,
            status,
            bytesOut,
            bytesIn,
            secrets: substituted.used,
            startMs,
          });
          resolve();
        });
      });
      upstream.on("error", (error) => {
        const refusal = new Refusal(
          502,
          `${host}:${port} could not be reached: ${error.message}`,
          upstreamError(error),
        );
        this.refuse(response, method, host, port, refusal);
        resolve();
      });
      request.on("data", (chunk: Buffer) => {
        bytesOut += chunk.length;
      });
      request.pipe(upstream);
    });
  }

  /** CONNECT host:port: a TLS tunnel to the vetted address, once the ClientHello agrees. */
  async tunnel(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const startMs = Date.now();
    const target = this.parseAuthority(request.url ?? "");
    if (target instanceof Refusal) return this.refuseSocket(client, "-", 0, target);
    const { host, port } = target;
    const allowed = await this.admit("CONNECT", host, port, "");
    if (allowed instanceof Refusal) return this.refuseSocket(client, host, port, allowed);
    const authority = this.options.authority;
    const secretInScope = allowed.policy.secrets.some((secret) =>
      allowedBy(secret.hosts, host, port),
    );
    if (authority !== undefined && secretInScope) {
      return this.intercept(client, head, host, port, authority);
    }
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    const hello = await readClientHello(client, head);
    if (typeof hello === "string" || normalizeHost(hello.serverName) !== host) {
      const why =
        typeof hello === "string"
          ? hello
          : `the TLS ClientHello names ${hello.serverName}, not the CONNECT target ${host}`;
      // After the 200, a refusal can only close the tunnel; it is logged as 421.
      client.destroy();
      this.recordRefusal("CONNECT", host, port, new Refusal(421, why, "http_request_error"));
      return;
    }
    const upstream = connect({ host: allowed.address.address, port: allowed.address.port });
    let bytesOut = hello.bytes.length;
    let bytesIn = 0;
    upstream.write(hello.bytes);
    client.on("data", (chunk: Buffer) => {
      bytesOut += chunk.length;
    });
    upstream.on("data", (chunk: Buffer) => {
      bytesIn += chunk.length;
    });
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    const closed = new Promise<void>((resolve) => {
      let open = 2;
      const closedOne = () => {
        open -= 1;
        if (open === 0) resolve();
      };
      client.once("close", closedOne);
      upstream.once("close", closedOne);
    });
    this.track(host, port, end, closed);
    await closed;
    this.record({
      method: "CONNECT",
      host,
      port,
      status: 200,
      bytesOut,
      bytesIn,
      secrets: [],
      startMs,
    });
  }

  /**
   * A tunnel to a host a secret may go to: TLS ends here, with a certificate the runner's CA
   * made for that host only, so that requests can carry the secret and answers be scrubbed.
   * The ClientHello's name and every request's Host must be the CONNECT target (421
   * otherwise); each request is admitted again (its secrets may have changed) and sent on over
   * TLS verified against the target.
   */
  private async intercept(
    client: Socket,
    head: Buffer,
    host: string,
    port: number,
    authority: CertificateAuthority,
  ): Promise<void> {
    const context = authority.contextFor(host);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) client.unshift(head);
    const secure = new TLSSocket(client, {
      isServer: true,
      secureContext: context,
      SNICallback: (name, answer) =>
        normalizeHost(name) === host
          ? answer(null, context)
          : answer(new Error(`the TLS ClientHello names ${name}, not the CONNECT target ${host}`)),
    });
    const inner = createServer({ requestTimeout: 0, headersTimeout: 30_000 });
    inner.on("request", (request: IncomingMessage, response: ServerResponse) => {
      this.forwardIntercepted(request, response, host, port).catch((error: unknown) => {
        log.warn(`egress proxy of ${this.options.sandboxId}: ${(error as Error).message}`);
        if (!response.headersSent) {
          response.writeHead(502, { "proxy-status": proxyStatus("proxy_internal_error") }).end();
        } else response.destroy();
      });
    });
    // A tunnel inside a tunnel would reach past the check made for this one.
    inner.on("connect", (_request: IncomingMessage, socket: Socket) => {
      socket.end(
        `HTTP/1.1 405 Method Not Allowed\r\nproxy-status: ${proxyStatus("http_request_denied")}\r\nconnection: close\r\n\r\n`,
      );
    });
    await new Promise<void>((resolve) => {
      secure.once("secure", () => {
        if (normalizeHost(String(secure.servername || "")) !== host) {
          secure.destroy();
          this.recordRefusal(
            "CONNECT",
            host,
            port,
            new Refusal(421, "the TLS ClientHello names no server", "http_request_error"),
          );
        } else {
          inner.emit("connection", secure);
        }
      });
      secure.once("error", (error) => {
        const refusal = new Refusal(421, error.message, "http_request_error");
        this.recordRefusal("CONNECT", host, port, refusal);
        secure.destroy();
      });
      secure.once("close", () => resolve());
      this.track(
        host,
        port,
        () => secure.destroy(),
        new Promise((closed) => secure.once("close", closed)),
      );
    });
  }

  private async forwardIntercepted(
    request: IncomingMessage,
    response: ServerResponse,
    host: string,
    port: number,
  ): Promise<void> {
    const method = request.method ?? "GET";
    const path = request.url ?? "";
    if (!path.startsWith("/")) {
      const refusal = new Refusal(
        421,
        "inside a tunnel, requests name a path on its host, not a URL",
        "http_request_error",
      );
      return this.refuse(response, method, host, port, refusal);
    }
    const hostHeader = String(request.headers.host ?? "");
    let named: URL | undefined;
    try {
      named = new URL(`https://${hostHeader}`);
    } catch {
      named = undefined;
    }
    const namedPort = named?.port === "" ? 443 : Number(named?.port);
    if (named === undefined || normalizeHost(named.hostname) !== host || namedPort !== port) {
      const refusal = new Refusal(
        421,
        `the request's Host (${hostHeader}) is not the tunnel's host ${host}:${port}`,
        "http_request_error",
      );
      return this.refuse(response, method, host, port, refusal);
    }
    const allowed = await this.admit(method, host, port, path);
    if (allowed instanceof Refusal) return this.refuse(response, method, host, port, allowed);
    await this.relay(request, response, { host, port, hostHeader, path }, allowed, true);
  }

  /**
   * The checks every request passes, in order, each before anything costs the network: a policy
   * (407), the allowlist (403), no placeholder in the URL (403), then a vetted address.
   */
  private async admit(
    method: string,
    host: string,
    port: number,
    url: string,
  ): Promise<
    { policy: SandboxEgressPolicy; address: { address: string; port: number } } | Refusal
  > {
    if (method === "TRACE") {
      return new Refusal(405, "TRACE is not allowed through the proxy", "http_request_denied");
    }
    let policy: SandboxEgressPolicy | undefined;
    try {
      policy = await this.options.policyFor(this.options.sandboxId);
    } catch (error) {
      if (error instanceof UnsealError) {
        return new Refusal(502, error.message, "proxy_internal_error");
      }
      // The store could not be read (its database did not answer): nothing is let through.
      log.warn(
        `egress proxy of ${this.options.sandboxId}: its secret store could not be read: ${(error as Error).message}`,
      );
      return new Refusal(
        502,
        "the sandbox's secret store could not be read, so nothing is let through; try again shortly",
        "proxy_internal_error",
      );
    }
    const extra = this.allowed();
    if (policy === undefined && extra.length === 0) {
      return new Refusal(407, noStore, "http_request_denied");
    }
    const allowlist = [...(policy?.allowlist ?? []), ...extra];
    if (!allowedBy(allowlist, host, port)) {
      const forNow =
        extra.length === 0 ? "" : `, nor among the hosts allowed for now (${extra.join(", ")})`;
      return new Refusal(
        403,
        policy === undefined
          ? `${host}:${port} is not among the hosts this sandbox may reach for now (${extra.join(", ")}); it has no secret store`
          : `${host}:${port} is not on the allowlist of secret store ${policy.store} (${policy.allowlist.join(", ")})${forNow}`,
        "http_request_denied",
      );
    }
    const inUrl = placeholderInUrl(url);
    if (inUrl !== undefined) return new Refusal(403, inUrl, "http_request_denied");
    const address = await vetTargetOrRefusal(
      host,
      port,
      allowlist,
      this.options.hosts,
      this.options.resolve,
    );
    if ("refused" in address) return new Refusal(403, address.refused, address.error);
    return { policy: policy ?? { store: "", allowlist, secrets: [] }, address };
  }

  private parseUrl(raw: string): { url: URL; host: string; port: number } | Refusal {
    if (/^https:/i.test(raw)) {
      return new Refusal(
        400,
        "an https URL goes through CONNECT (set HTTPS_PROXY), not as a request",
        "http_request_error",
      );
    }
    if (!/^http:\/\//i.test(raw)) {
      return new Refusal(
        400,
        "this is the sandbox's egress proxy: send absolute http:// URLs, or CONNECT",
        "http_request_error",
      );
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return new Refusal(400, "the request's URL is not valid", "http_request_error");
    }
    if (url.username !== "" || url.password !== "") {
      return new Refusal(
        400,
        "URLs with user info are not sent through the proxy; use an Authorization header",
        "http_request_error",
      );
    }
    const host = normalizeHost(url.hostname);
    if (!isValidHost(host)) {
      return new Refusal(
        400,
        "the request's host is not a valid name or address",
        "http_request_error",
      );
    }
    return { url, host, port: url.port === "" ? 80 : Number(url.port) };
  }

  // host:port as CONNECT gives it; the URL parser reads IP literals in every notation.
  private parseAuthority(raw: string): { host: string; port: number } | Refusal {
    const target = this.parseUrl(`http://${raw}`);
    const malformed = new Refusal(400, "CONNECT needs host:port", "http_request_error");
    if (target instanceof Refusal) return malformed;
    if (!/:\d+$/.test(raw) || target.url.pathname !== "/" || target.url.search !== "") {
      return malformed;
    }
    return { host: target.host, port: target.port };
  }

  private refuse(
    response: ServerResponse,
    method: string,
    host: string,
    port: number,
    refusal: Refusal,
  ): void {
    if (!response.headersSent) {
      response.writeHead(refusal.status, {
        "content-type": "text/plain; charset=utf-8",
        "proxy-status": proxyStatus(refusal.error),
        connection: "close",
        ...(refusal.status === 407 ? { "proxy-authenticate": 'Cairn realm="egress"' } : {}),
      });
      response.end(`${refusal.message}\n`);
    } else {
      response.destroy();
    }
    this.recordRefusal(method, host, port, refusal);
  }

  private refuseSocket(socket: Socket, host: string, port: number, refusal: Refusal): void {
    const body = `${refusal.message}\n`;
    const reason =
      {
        400: "Bad Request",
        403: "Forbidden",
        405: "Method Not Allowed",
        407: "Proxy Authentication Required",
        502: "Bad Gateway",
      }[refusal.status] ?? "Refused";
    socket.end(
      `HTTP/1.1 ${refusal.status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nproxy-status: ${proxyStatus(refusal.error)}\r\n${refusal.status === 407 ? 'proxy-authenticate: Cairn realm="egress"\r\n' : ""}connection: close\r\n\r\n${body}`,
    );
    this.recordRefusal("CONNECT", host, port, refusal);
  }

  private recordRefusal(method: string, host: string, port: number, refusal: Refusal): void {
    this.record({
      method,
      host,
      port,
      status: refusal.status,
      bytesOut: 0,
      bytesIn: 0,
      secrets: [],
      refused: refusal.message,
    });
  }

  private record(
    entry: Omit<EgressRecord, "sandboxId" | "startMs" | "endMs"> & { startMs?: number },
  ): void {
    const endMs = Date.now();
    const record: EgressRecord = {
      sandboxId: this.options.sandboxId,
      ...entry,
      startMs: entry.startMs ?? endMs,
      endMs,
    };
    log.info(
      `egress ${record.sandboxId} ${record.method} ${record.host}:${record.port} ${record.status} out ${record.bytesOut} in ${record.bytesIn}${record.secrets.length > 0 ? ` secrets ${record.secrets.join(",")}` : ""}${record.refused === undefined ? "" : ` refused: ${record.refused}`}`,
    );
    this.options.onRecord?.(record);
  }
}
