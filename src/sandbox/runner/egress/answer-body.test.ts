import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import {
  createServer,
  type IncomingMessage,
  type RequestOptions,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../../../test/helpers/bytes.js";
import { CertificateAuthority } from "./certificate-authority.js";
import type { SandboxEgressPolicy } from "./policy.js";
import { EgressProxy } from "./proxy.js";
import { scrubBytes, scrubPatterns } from "./scrub.js";

// Large answers through the proxy from real upstreams on loopback (HTTP, and HTTPS through an
// intercepted tunnel), each compared byte for byte with the same body scrubbed whole: the
// proxy reads upstream answers into one buffer per connection and frees each piece of a body
// once it is written, so a byte read or freed too early would show here.
const secret = "sk-live-0123456789abcdef0123";
const placeholder = `cairn_sealed_${"c".repeat(32)}`;
const withSecret: SandboxEgressPolicy = {
  store: "prod",
  allowlist: ["api.test.internal"],
  secrets: [{ key: "API_KEY", placeholder, value: secret, hosts: ["api.test.internal"] }],
};
const patterns = scrubPatterns(withSecret);

/** Bytes 0x00-0xff with every form of the secret every 64 KiB or so, two close together. */
function bodyOf(length: number, seed: number): Buffer {
  const random = seededRandom(seed);
  const next = () => Math.floor(random() * 2 ** 31);
  const body = Buffer.from(Array.from({ length }, () => next() & 0xff));
  const forms = patterns.map((pattern) => pattern.find);
  for (let at = 1000; at < length - 100; at += 65_536 + (next() % 5000)) {
    const form = forms[next() % forms.length] as Buffer;
    form.copy(body, at);
    form.copy(body, at + 64_500 - (next() % 100));
  }
  return body;
}

const bodies = {
  fixed: bodyOf(3_000_000, 1),
  chunked: bodyOf(2_000_000, 2),
  close: bodyOf(1_500_000, 3),
};

/** Serves each body: with a length, in odd-sized chunks, or ended by closing the connection. */
function serve(request: IncomingMessage, response: ServerResponse): void {
  const name = (request.url ?? "").split("/").pop() as keyof typeof bodies;
  const body = bodies[name] ?? Buffer.from("none");
  if (name === "fixed") {
    response.writeHead(200, { "content-length": body.length });
    response.end(body);
  } else if (name === "close") {
    response.writeHead(200, { connection: "close" });
    response.useChunkedEncodingByDefault = false;
    response.end(body);
  } else {
    response.writeHead(200);
    for (let at = 0, size = 1; at < body.length; at += size, size = (size * 7 + 3) % 100_003) {
      response.write(body.subarray(at, at + size));
    }
    response.end();
  }
}

let folder: string;
let upstream: Server;
let connections = 0;
let proxy: EgressProxy;
let policy: SandboxEgressPolicy = withSecret;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "cairn-egress-body-"));
  upstream = createServer(serve);
  upstream.on("connection", () => connections++);
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as { port: number }).port;
  proxy = await EgressProxy.start(join(folder, "proxy", "proxy.sock"), {
    sandboxId: "sbx_body",
    policyFor: () => policy,
    hosts: new Map([["api.test.internal", { address: "127.0.0.1", port }]]),
  });
});
afterAll(async () => {
  await proxy.close();
  upstream.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A GET, its answer read `pauseFirst` ms late; resolves with the status and the body. */
function fetch(
  send: typeof request,
  options: RequestOptions,
  pauseFirst = 0,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const sent = send(options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }),
      );
      if (pauseFirst > 0) {
        response.pause();
        setTimeout(() => response.resume(), pauseFirst);
      }
    });
    sent.on("error", reject);
    sent.end();
  });
}

/** GET through the proxy, the placeholder sent along unless `secretless`. */
function get(path: string, pauseFirst = 0, secretless = false) {
  const authorization = secretless ? {} : { authorization: `Bearer ${placeholder}` };
  const options = {
    socketPath: proxy.socketPath,
    path: `http://api.test.internal${path}`,
    headers: { host: "api.test.internal", ...authorization },
    agent: false,
  };
  return fetch(request, options, pauseFirst);
}

describe("answers through the egress proxy", () => {
  it("come whole and scrubbed, with a length, chunked, or ended by the upstream closing", async () => {
    for (const name of ["fixed", "chunked", "close"] as const) {
      const answer = await get(`/${name}`);
      expect(answer.status).toBe(200);
      expect(answer.body.includes(Buffer.from(secret)), name).toBe(false);
      expect(answer.body.equals(scrubBytes(bodies[name], patterns)), name).toBe(true);
    }
  });

  it("come whole to a sandbox that reads slowly, one after another on one upstream connection", async () => {
    const before = connections;
    const slow = await get("/fixed", 300);
    expect(slow.body.equals(scrubBytes(bodies.fixed, patterns))).toBe(true);
    const again = await get("/chunked");
    expect(again.body.equals(scrubBytes(bodies.chunked, patterns))).toBe(true);
    // Kept alive: the second answer came over the connection the first one used.
    expect(connections - before).toBe(1);
  });

  it("come as they are when no secret is in scope", async () => {
    policy = { store: "prod", allowlist: ["api.test.internal"], secrets: [] };
    try {
      const answer = await get("/chunked", 0, true);
      expect(answer.body.equals(bodies.chunked)).toBe(true);
    } finally {
      policy = withSecret;
    }
  });
});

describe("answers through an intercepted tunnel", () => {
  let server: ReturnType<typeof createHttpsServer>;
  let intercepting: EgressProxy;
  let runnerCa: CertificateAuthority;

  beforeAll(async () => {
    const upstreamCa = CertificateAuthority.create("Test upstream");
    server = createHttpsServer(
      { SNICallback: (_name, done) => done(null, upstreamCa.contextFor("api.test.internal")) },
      serve,
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    runnerCa = CertificateAuthority.create();
    intercepting = await EgressProxy.start(join(folder, "tls", "proxy.sock"), {
      sandboxId: "sbx_body_tls",
      policyFor: () => withSecret,
      hosts: new Map([
        [
          "api.test.internal",
          { address: "127.0.0.1", port: (server.address() as { port: number }).port },
        ],
      ]),
      authority: runnerCa,
      upstreamCa: [upstreamCa.certificatePem],
    });
  });
  afterAll(async () => {
    await intercepting.close();
    server.close();
  });

  /** GET over a new intercepted tunnel, trusting the runner's CA as a sandbox does. */
  async function getThrough(path: string): Promise<Buffer> {
    const socket: Socket = connect(intercepting.socketPath);
    await once(socket, "connect");
    socket.write("CONNECT api.test.internal:443 HTTP/1.1\r\nHost: api.test.internal:443\r\n\r\n");
    await once(socket, "data");
    const options = {
      createConnection: () =>
        tlsConnect({ socket, servername: "api.test.internal", ca: [runnerCa.certificatePem] }),
      path,
      headers: { host: "api.test.internal", authorization: `Bearer ${placeholder}` },
    };
    return (await fetch(httpsRequest, options)).body;
  }

  it("come whole and scrubbed over TLS on both sides", async () => {
    for (const name of ["fixed", "chunked"] as const) {
      const body = await getThrough(`/${name}`);
      expect(body.equals(scrubBytes(bodies[name], patterns)), name).toBe(true);
    }
  });
});
