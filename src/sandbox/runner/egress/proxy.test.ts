import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
