import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, currentSpan, observe, shutdown } from "cairn-ai";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthority } from "../../src/sandbox/runner/egress/certificate-authority.js";
import type { TestServer } from "../server/helpers.js";
import { connection, hostProcesses, needSandboxes, startSandboxServer } from "./helpers.js";

// An upstream on the host's loopback, named api.test.internal and other.test.internal for the
// sandboxes (--egress-host): it answers with what it received, and echoes the Authorization
// header back in a header and in the body, as a careless API would.
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

const value = "sk-live-5e6f7a8b9c0d1e2f3a4b5c6d";
// The shortest value a secret may have: any shorter the proxy could not scrub, and is refused.
const shortestValue = "k9Qz4mWx";
let upstream: Server;
let upstreamPort: number;
const received: Received[] = [];
let t: TestServer | undefined;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      headers: request.headers,
    });
    const authorization = String(request.headers.authorization ?? "");
    response.writeHead(200, { "content-type": "application/json", "x-echo": authorization });
    response.end(JSON.stringify({ url: request.url, authorization }));
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  upstreamPort = (upstream.address() as AddressInfo).port;
  t = await startSandboxServer({
    egress: {
      hosts: {
        "api.test.internal": `127.0.0.1:${upstreamPort}`,
        "other.test.internal": `127.0.0.1:${upstreamPort}`,
      },
    },
  });
  if (t !== undefined) {
    await t.call("POST", "/api/secret-stores", {
      name: "prod",
      allowlist: ["api.test.internal", "other.test.internal"],
    });
    await t.call("PUT", "/api/secret-stores/prod/secrets/API_KEY", {
      value,
      hosts: ["api.test.internal"],
    });
    await t.call("PUT", "/api/secret-stores/prod/secrets/SHORTEST", {
      value: shortestValue,
      hosts: ["api.test.internal"],
    });
  }
});
afterAll(async () => {
  await t?.stop();
  upstream.close();
});

/** Sends `text` to the sandbox's proxy with bash alone (no curl needed) and returns the answer. */
async function throughProxy(sandbox: Sandbox, text: string): Promise<string> {
  const result = await sandbox.run("bash", {
    args: ["-c", "exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; cat >&3; cat <&3"],
    stdin: text,
  });
  return result.stdout;
}

async function placeholderIn(sandbox: Sandbox, key = "API_KEY"): Promise<string> {
  return (await sandbox.run("sh", { args: ["-c", `printf %s $CAIRN_SECRET_${key}`] })).stdout;
}

/** The body of a raw HTTP/1.1 answer, its chunked framing undone. */
function bodyOf(answer: string): string {
  const split = answer.indexOf("\r\n\r\n");
  const head = answer.slice(0, split);
  let rest = answer.slice(split + 4);
  if (!/transfer-encoding: chunked/i.test(head)) return rest;
  let body = "";
  for (;;) {
    const line = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return body;
    body += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

const get = (url: string, headers: Record<string, string> = {}) =>
  `GET ${url} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n${Object.entries(headers)
    .map(([name, each]) => `${name}: ${each}\r\n`)
    .join("")}Connection: close\r\n\r\n`;

describe("a sandbox's egress", () => {
  it("is refused with 407 without a secret store, reaching nothing", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create(connection(t));
    try {
      const before = received.length;
      const answer = await throughProxy(sandbox, get("http://api.test.internal/"));
      expect(answer).toMatch(/^HTTP\/1\.1 407 /);
      expect(answer).toContain("no secret store");
      const connect = await throughProxy(
        sandbox,
        "CONNECT api.test.internal:443 HTTP/1.1\r\nHost: api.test.internal:443\r\n\r\n",
      );
      expect(connect).toMatch(/^HTTP\/1\.1 407 /);
      expect(received.length).toBe(before);
      const env = await sandbox.run("env");
      expect(env.stdout).toContain("HTTPS_PROXY=http://127.0.0.1:3128");
      expect(env.stdout).toContain("NO_PROXY=localhost,127.0.0.1");
      // The runner's CA is trusted in the sandbox, after the system's certificates.
      expect(env.stdout).toContain("SSL_CERT_FILE=/etc/cairn/ca-bundle.pem");
      const bundle = await sandbox.run("cat", { args: ["/etc/cairn/ca-bundle.pem"] });
      expect(bundle.stdout).toMatch(/-----BEGIN CERTIFICATE-----/);
      const write = await sandbox.run("sh", {
        args: ["-c", "echo x > /etc/cairn/ca-bundle.pem 2>/dev/null && echo replaced"],
      });
      expect(write.stdout).not.toContain("replaced");
    } finally {
      await sandbox.kill();
    }
  });

  it("puts a secret into requests to its host and scrubs it from the answer", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      const placeholder = await placeholderIn(sandbox);
      const answer = await throughProxy(
        sandbox,
        get("http://api.test.internal/v1/models", { Authorization: `Bearer ${placeholder}` }),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.at(-1)?.headers.authorization).toBe(`Bearer ${value}`);
      expect(received.at(-1)?.headers.host).toBe("api.test.internal");
      // The echo comes back with the placeholder, in the header and in the body.
      expect(answer).not.toContain(value);
      expect(answer).toContain(`x-echo: Bearer ${placeholder}`);
      expect(bodyOf(answer)).toContain(`"authorization":"Bearer ${placeholder}"`);

      // Basic authentication carries it base64-encoded; the echo of that is scrubbed too.
      const basic = Buffer.from(`user:${placeholder}`).toString("base64");
      const answerBasic = await throughProxy(
        sandbox,
        get("http://api.test.internal/basic", { Authorization: `Basic ${basic}` }),
      );
      expect(received.at(-1)?.headers.authorization).toBe(
        `Basic ${Buffer.from(`user:${value}`).toString("base64")}`,
      );
      expect(answerBasic).not.toContain(Buffer.from(`user:${value}`).toString("base64"));
      expect(answerBasic).not.toContain(value);

      // The shortest value that can be set is scrubbed as well, as it is and inside base64.
      const shortest = await placeholderIn(sandbox, "SHORTEST");
      expect(shortest).toMatch(/^cairn_sealed_[0-9a-f]{32}$/);
      const answerShortest = await throughProxy(
        sandbox,
        get("http://api.test.internal/shortest", { Authorization: `Bearer ${shortest}` }),
      );
      expect(received.at(-1)?.headers.authorization).toBe(`Bearer ${shortestValue}`);
      expect(answerShortest).not.toContain(shortestValue);
      expect(answerShortest).toContain(`x-echo: Bearer ${shortest}`);
      expect(bodyOf(answerShortest)).toContain(`"authorization":"Bearer ${shortest}"`);
      const shortestBasic = await throughProxy(
        sandbox,
        get("http://api.test.internal/basic", {
          Authorization: `Basic ${Buffer.from(`user:${shortest}`).toString("base64")}`,
        }),
      );
      const sentBasic = Buffer.from(`user:${shortestValue}`).toString("base64");
      expect(received.at(-1)?.headers.authorization).toBe(`Basic ${sentBasic}`);
      expect(shortestBasic).not.toContain(sentBasic);
      expect(shortestBasic).not.toContain(sentBasic.slice(4, 16));
      // The bytes through the proxy count in the sandbox's usage.
      const usage = await (await t.call("GET", "/api/usage?group_by=sandbox")).json();
      const mine = usage.groups.find((group: { key: string }) => group.key === sandbox.id);
      expect(mine.egressBytes).toBeGreaterThan(0);
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses hosts off the allowlist, tricks on names and addresses, and placeholders out of scope", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      const placeholder = await placeholderIn(sandbox);
      const before = received.length;
      for (const url of [
        "http://evil.example/",
        "http://api.test.internal.evil.example/",
        "http://evilapi.test.internal/",
        `http://127.0.0.1:${upstreamPort}/`,
        `http://0x7f000001:${upstreamPort}/`,
        `http://2130706433:${upstreamPort}/`,
        "http://169.254.169.254/latest/meta-data/",
        `http://[::ffff:127.0.0.1]:${upstreamPort}/`,
      ]) {
        const answer = await throughProxy(sandbox, get(url));
        expect(answer, url).toMatch(/^HTTP\/1\.1 403 /);
        expect(answer, url).toContain("not on the allowlist of secret store prod");
      }
      // A secret sent to a host outside its own hosts, although on the allowlist.
      const elsewhere = await throughProxy(
        sandbox,
        get("http://other.test.internal/", { "X-Api-Key": placeholder }),
      );
      expect(elsewhere).toMatch(/^HTTP\/1\.1 403 /);
      expect(elsewhere).toContain("secret API_KEY");
      // A placeholder in the URL, and one of no secret of this sandbox.
      const inUrl = await throughProxy(
        sandbox,
        get(`http://api.test.internal/?key=${placeholder}`),
      );
      expect(inUrl).toMatch(/^HTTP\/1\.1 403 /);
      const foreign = await throughProxy(
        sandbox,
        get("http://api.test.internal/", {
          Authorization: `Bearer cairn_sealed_${"0".repeat(32)}`,
        }),
      );
      expect(foreign).toMatch(/^HTTP\/1\.1 403 /);
      const trace = await throughProxy(
        sandbox,
        "TRACE http://api.test.internal/ HTTP/1.1\r\nHost: api.test.internal\r\nConnection: close\r\n\r\n",
      );
      expect(trace).toMatch(/^HTTP\/1\.1 405 /);
      expect(received.length).toBe(before);
    } finally {
      await sandbox.kill();
    }
  });

  it("has no other way out: no route, no DNS", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      const direct = await sandbox.run("bash", {
        args: [
          "-c",
          `(exec 3<>/dev/tcp/127.0.0.1/${upstreamPort}) 2>/dev/null && echo loopback-open; (exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo internet-open; getent hosts example.com || echo no-dns`,
        ],
      });
      expect(direct.stdout).not.toContain("loopback-open");
      expect(direct.stdout).not.toContain("internet-open");
      expect(direct.stdout).toContain("no-dns");
    } finally {
      await sandbox.kill();
    }
  });
});

describe("a sandbox that floods its proxy with connections", () => {
  it("gets at most 128 relayed at once, in its own cgroup, and the host is unaffected", async (context) => {
    needSandboxes(context, t);
    const before = (await hostProcesses("cairn-relay-")).length;
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    try {
      // One process holding 250 connections open to the proxy.
      let opened: () => void = () => undefined;
      const allOpen = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const flood = await sandbox.exec("bash", {
        args: [
          "-c",
          'for i in $(seq 10 260); do eval "exec $i<>/dev/tcp/127.0.0.1/3128" 2>/dev/null; done; echo opened; sleep 30',
        ],
        onStdout: (bytes) => {
          if (Buffer.from(bytes).toString().includes("opened")) opened();
        },
      });
      await allOpen;
      const relays = (await hostProcesses("cairn-relay-")).length - before;
      // The relay itself and its connections: more than one, never more than 128 at once.
      expect(relays).toBeGreaterThan(1);
      expect(relays).toBeLessThanOrEqual(129);
      // The service still answers meanwhile.
      expect((await t.call("GET", "/health")).status).toBe(200);
      flood.detach();
    } finally {
      await sandbox.kill();
    }
    // Stopping the sandbox ends its relay and every connection's process.
    const deadline = Date.now() + 10_000;
    while ((await hostProcesses("cairn-relay-")).length > before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await hostProcesses("cairn-relay-")).length).toBeLessThanOrEqual(before);
  });
});

describe("a sandbox's egress in a trace", () => {
  it("is a span under the exec that made the request, with no secret's value", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), secretStore: "prod" });
    configure({ endpoint: t.server.url, apiKey: t.apiKey, exportMode: "immediate" });
    try {
      const placeholder = await placeholderIn(sandbox);
      let traceId = "";
      await observe(
        async () => {
          traceId = currentSpan().traceId;
          await sandbox.run("bash", {
            args: ["-c", "exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; cat >&3; cat <&3"],
            stdin: get("http://api.test.internal/traced", {
              Authorization: `Bearer ${placeholder}`,
            }),
          });
        },
        { kind: "agent", spanName: "fetch models" },
      )();
      await shutdown();
      const trace = await (await t.call("GET", `/traces/${traceId}`)).json();
      const flat: Array<Record<string, unknown>> = [];
      const walk = (nodes: Array<Record<string, unknown>>) => {
        for (const node of nodes) {
          flat.push(node);
          walk(node.children as Array<Record<string, unknown>>);
        }
      };
      walk(trace.spans);
      const exec = flat.find((span) => String(span.name).startsWith("sandbox exec"));
      const egress = flat.find((span) => String(span.name).startsWith("egress GET"));
      expect(egress).toMatchObject({
        name: "egress GET api.test.internal",
        kind: "tool",
        status: "ok",
        parent_span_id: exec?.span_id,
        attributes: {
          "http.response.status_code": 200,
          "cairn.egress.secrets": ["API_KEY"],
          "server.address": "api.test.internal",
        },
      });
      expect(JSON.stringify(trace)).not.toContain(value);
    } finally {
      await shutdown();
      await sandbox.kill();
    }
  });
});

describe("HTTPS from inside a sandbox", () => {
  let tls: TestServer | undefined;
  let secure: import("node:https").Server;
  let seenAuthorization: string | undefined;
  let folder: string;

  beforeAll(async () => {
    // An HTTPS upstream with a CA of its own, which the service is told to trust.
    const upstreamCa = CertificateAuthority.create("Test upstream");
    folder = mkdtempSync(join(tmpdir(), "cairn-egress-ca-"));
    writeFileSync(join(folder, "ca.pem"), upstreamCa.certificatePem);
    secure = createHttpsServer(
      { SNICallback: (_name, done) => done(null, upstreamCa.contextFor("secure.test.internal")) },
      (request, response) => {
        seenAuthorization = request.headers.authorization;
        response.writeHead(200, { "content-type": "text/plain" });
        response.end(`echo: ${request.headers.authorization}\n`);
      },
    );
    secure.listen(0, "127.0.0.1");
    await once(secure, "listening");
    const port = (secure.address() as AddressInfo).port;
    tls = await startSandboxServer({
      egress: {
        hosts: { "secure.test.internal": `127.0.0.1:${port}` },
        caFiles: [join(folder, "ca.pem")],
      },
    });
    if (tls !== undefined) {
      await tls.call("POST", "/api/secret-stores", {
        name: "tls",
        allowlist: ["secure.test.internal"],
      });
      await tls.call("PUT", "/api/secret-stores/tls/secrets/API_KEY", { value });
    }
  });
  afterAll(async () => {
    await tls?.stop();
    secure?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("works with curl through the proxy: intercepted, the secret put in, the echo scrubbed", async (context) => {
    needSandboxes(context, tls);
    if (!existsSync("/usr/bin/curl")) context.skip("curl is not installed (.ci/run installs it)");
    const sandbox = await Sandbox.create({ ...connection(tls), secretStore: "tls" });
    try {
      const result = await sandbox.run("sh", {
        args: [
          "-c",
          'curl -sS --max-time 20 -H "Authorization: Bearer $CAIRN_SECRET_API_KEY" https://secure.test.internal/v1',
        ],
      });
      const placeholder = await placeholderIn(sandbox);
      expect(result.stderr).toBe("");
      expect(result.stdout).toBe(`echo: Bearer ${placeholder}\n`);
      expect(seenAuthorization).toBe(`Bearer ${value}`);
    } finally {
      await sandbox.kill();
    }
  });
});
