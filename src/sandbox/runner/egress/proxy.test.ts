import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  request as httpRequest,
} from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthority } from "./certificate-authority.js";
import type { SandboxEgressPolicy } from "./policy.js";
import { EgressProxy, type EgressRecord } from "./proxy.js";

// The proxy on a real Unix socket, as the relay reaches it, and a TCP upstream on loopback
// (named tls.test.internal) that records the bytes it gets: a tunnel's ClientHello is enough to
// see what the proxy let through, without a certificate.
let folder: string;
let proxy: EgressProxy;
let upstream: Server;
const upstreamBytes: Buffer[] = [];
const records: EgressRecord[] = [];
let policy: SandboxEgressPolicy | undefined;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "cairn-egress-"));
  upstream = createServer((socket) => {
    socket.on("data", (chunk: Buffer) => upstreamBytes.push(chunk));
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as { port: number }).port;
  proxy = await EgressProxy.start(join(folder, "proxy", "proxy.sock"), {
    sandboxId: "sbx_test",
    policyFor: () => policy,
    hosts: new Map([["tls.test.internal", { address: "127.0.0.1", port }]]),
    onRecord: (record) => records.push(record),
  });
});
afterAll(async () => {
  await proxy.close();
  upstream.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Opens a CONNECT tunnel through the proxy; resolves with the socket and the status line. */
async function tunnel(target: string): Promise<{ socket: Socket; status: string }> {
  const socket = connect(proxy.socketPath);
  await once(socket, "connect");
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  const [first] = (await once(socket, "data")) as [Buffer];
  return { socket, status: first.toString("latin1").split("\r\n")[0] as string };
}

function helloThrough(socket: Socket, servername: string): void {
  const tls = tlsConnect({ socket, servername, rejectUnauthorized: false });
  tls.on("error", () => undefined);
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("CONNECT through the egress proxy", () => {
  it("is 407 without a store and 403 off the allowlist", async () => {
    policy = undefined;
    expect((await tunnel("tls.test.internal:443")).status).toBe(
      "HTTP/1.1 407 Proxy Authentication Required",
    );
    policy = { store: "prod", allowlist: ["tls.test.internal"], secrets: [] };
    expect((await tunnel("evil.example:443")).status).toBe("HTTP/1.1 403 Forbidden");
    expect((await tunnel("tls.test.internal:22")).status).toBe("HTTP/1.1 403 Forbidden");
  });

  it("passes a ClientHello naming the target on to the vetted address", async () => {
    policy = { store: "prod", allowlist: ["tls.test.internal"], secrets: [] };
    upstreamBytes.length = 0;
    const { socket, status } = await tunnel("tls.test.internal:443");
    expect(status).toBe("HTTP/1.1 200 Connection Established");
    helloThrough(socket, "tls.test.internal");
    await until(() => Buffer.concat(upstreamBytes).includes(Buffer.from("tls.test.internal")));
    const received = Buffer.concat(upstreamBytes);
    expect(received[0]).toBe(0x16);
    expect(received.includes(Buffer.from("tls.test.internal"))).toBe(true);
    socket.destroy();
  });

  it("closes a tunnel whose ClientHello names another host, or that carries no TLS", async () => {
    policy = { store: "prod", allowlist: ["tls.test.internal"], secrets: [] };
    upstreamBytes.length = 0;
    const fronted = await tunnel("tls.test.internal:443");
    helloThrough(fronted.socket, "evil.example");
    await once(fronted.socket, "close");
    const plain = await tunnel("tls.test.internal:443");
    plain.socket.write("GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n");
    await once(plain.socket, "close");
    expect(upstreamBytes).toEqual([]);
    const refused = records.filter((record) => record.status === 421);
    expect(refused.map((record) => record.refused)).toEqual([
      "the TLS ClientHello names evil.example, not the CONNECT target tls.test.internal",
      "the tunnel's first bytes are not a TLS handshake",
    ]);
  });
});

describe("CONNECT to a host a secret may go to", () => {
  const secret = "sk-live-9a8b7c6d5e4f3a2b1c0d";
  const placeholder = `cairn_sealed_${"b".repeat(32)}`;
  let intercepting: EgressProxy;
  let runnerCa: CertificateAuthority;
  let server: ReturnType<typeof createHttpsServer>;
  let seen: Array<{ url: string; authorization: string | undefined; host: string | undefined }>;

  beforeAll(async () => {
    seen = [];
    // The upstream has a certificate of its own CA, which the proxy is told to trust.
    const upstreamCa = CertificateAuthority.create("Test upstream");
    server = createHttpsServer(
      {
        SNICallback: async (_name, done) => done(null, upstreamCa.contextFor("api.test.internal")),
      },
      (request, response) => {
        seen.push({
          url: request.url ?? "",
          authorization: request.headers.authorization,
          host: request.headers.host,
        });
        response.writeHead(200, { "x-echo": String(request.headers.authorization) });
        response.end(`you sent ${request.headers.authorization}`);
      },
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as { port: number }).port;
    runnerCa = CertificateAuthority.create();
    intercepting = await EgressProxy.start(join(folder, "intercepting", "proxy.sock"), {
      sandboxId: "sbx_tls",
      policyFor: () => ({
        store: "prod",
        allowlist: ["api.test.internal"],
        secrets: [{ key: "API_KEY", placeholder, value: secret, hosts: ["api.test.internal"] }],
      }),
      hosts: new Map([["api.test.internal", { address: "127.0.0.1", port }]]),
      authority: runnerCa,
      upstreamCa: [upstreamCa.certificatePem],
    });
  });
  afterAll(async () => {
    await intercepting.close();
    server.close();
  });

  /** An HTTPS request through the tunnel, trusting the runner's CA as a sandbox does. */
  async function through(
    target: string,
    servername: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, unknown>; body: string } | Error> {
    const socket = connect(intercepting.socketPath);
    await once(socket, "connect");
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    await once(socket, "data");
    return new Promise((resolve) => {
      const request = httpsRequest(
        {
          createConnection: () => tlsConnect({ socket, servername, ca: [runnerCa.certificatePem] }),
          path: "/v1/models",
          headers,
        },
        (response) => {
          let body = "";
          response.setEncoding("utf8").on("data", (text: string) => {
            body += text;
          });
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
          );
        },
      );
      request.on("error", (error) => resolve(error));
      request.end();
    });
  }

  it("ends TLS with the runner's CA, puts the secret in, and scrubs the echo", async () => {
    const answer = await through("api.test.internal:443", "api.test.internal", {
      host: "api.test.internal",
      authorization: `Bearer ${placeholder}`,
    });
    expect(answer).toMatchObject({ status: 200, body: `you sent Bearer ${placeholder}` });
    expect((answer as { headers: Record<string, unknown> }).headers["x-echo"]).toBe(
      `Bearer ${placeholder}`,
    );
    expect(seen.at(-1)).toEqual({
      url: "/v1/models",
      authorization: `Bearer ${secret}`,
      host: "api.test.internal",
    });
  });

  it("refuses a Host other than the tunnel's with 421, and another SNI at the handshake", async () => {
    const before = seen.length;
    const otherHost = await through("api.test.internal:443", "api.test.internal", {
      host: "evil.example",
      authorization: `Bearer ${placeholder}`,
    });
    expect(otherHost).toMatchObject({ status: 421 });
    const otherName = await through("api.test.internal:443", "evil.example", {
      host: "api.test.internal",
    });
    expect(otherName).toBeInstanceOf(Error);
    expect(seen.length).toBe(before);
  });
});

describe("the proxy's own answers", () => {
  let own: EgressProxy;
  let web: HttpServer;
  let closedPort: number;

  beforeAll(async () => {
    // An upstream that claims, in its own Proxy-Status, to be the proxy refusing.
    web = createHttpServer((_request, response) => {
      response.writeHead(404, { "proxy-status": "cairn-egress; error=http_request_denied" });
      response.end("no such model");
    });
    web.listen(0, "127.0.0.1");
    await once(web, "listening");
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    own = await EgressProxy.start(join(folder, "own", "proxy.sock"), {
      sandboxId: "sbx_own",
      policyFor: () => policy,
      hosts: new Map([
        [
          "web.test.internal",
          { address: "127.0.0.1", port: (web.address() as { port: number }).port },
        ],
        ["closed.test.internal", { address: "127.0.0.1", port: closedPort }],
      ]),
    });
  });
  afterAll(async () => {
    await own.close();
    web.close();
  });

  /** A plain-HTTP request through the proxy, as a sandbox's client sends it. */
  function get(url: string): Promise<{ status: number; proxyStatus: unknown; body: string }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        { socketPath: own.socketPath, path: url, headers: { host: new URL(url).host } },
        (response) => {
          let body = "";
          response.setEncoding("utf8").on("data", (text: string) => {
            body += text;
          });
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              proxyStatus: response.headers["proxy-status"],
              body,
            }),
          );
        },
      );
      request.on("error", reject);
      request.end();
    });
  }

  it("marks each refusal with Proxy-Status: cairn-egress and the RFC 9209 error type", async () => {
    policy = undefined;
    expect(await get("http://web.test.internal/v1")).toMatchObject({
      status: 407,
      proxyStatus: "cairn-egress; error=http_request_denied",
    });
    policy = {
      store: "prod",
      allowlist: ["*.test.internal", "nowhere.invalid", "localhost"],
      secrets: [],
    };
    const refusals: Array<[url: string, status: number, error: string, body: RegExp]> = [
      ["http://evil.example/", 403, "http_request_denied", /is not on the allowlist/],
      [
        "http://nowhere.invalid/v1",
        403,
        "destination_not_found",
        /^nowhere\.invalid does not resolve \(ENOTFOUND\)\n$/,
      ],
      ["http://localhost/v1", 403, "destination_ip_prohibited", /resolves only to private/],
      ["http://closed.test.internal/v1", 502, "connection_refused", /ECONNREFUSED/],
    ];
    for (const [url, status, error, body] of refusals) {
      const answer = await get(url);
      expect({ url, ...answer, body: "-" }).toEqual({
        url,
        status,
        proxyStatus: `cairn-egress; error=${error}`,
        body: "-",
      });
      expect(answer.body).toMatch(body);
    }
    for (const target of ["evil.example:443", "nowhere.invalid:443"]) {
      const refused = connect(own.socketPath);
      await once(refused, "connect");
      refused.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      const [answer] = (await once(refused, "data")) as [Buffer];
      expect(answer.toString("latin1")).toMatch(
        /^HTTP\/1\.1 403 Forbidden\r\n(?:.*\r\n)*proxy-status: cairn-egress; error=(http_request_denied|destination_not_found)\r\n/,
      );
      refused.destroy();
    }
  });

  it("ends an upstream's answer with its own received-status member, whatever the upstream says", async () => {
    policy = { store: "prod", allowlist: ["*.test.internal"], secrets: [] };
    expect(await get("http://web.test.internal/v1")).toEqual({
      status: 404,
      proxyStatus: "cairn-egress; error=http_request_denied, cairn-egress; received-status=404",
      body: "no such model",
    });
  });
});
