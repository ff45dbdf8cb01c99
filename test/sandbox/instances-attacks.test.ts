// Forwarding between service instances (issue 16), attacked: request targets that the router
// reads otherwise than a naive look at the path would, bodies over the limit, owners that do
// not answer or stall, an advertised URL that leads to the wrong instance, and a client that
// fails authentication through another instance. Real instances on a real cluster, real
// sockets; the stalled owner is a socket that accepts and never answers.

import { createServer as createHttpServer, request, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/logger.js";
import { forwardToOwners, sandboxResource } from "../../src/server/sandboxes/owner-forwarding.js";
import { openPostgres } from "../../src/server/store/postgres/connection.js";
import { apiKey, instancesSuite } from "./instances-helpers.js";

const { cleanups, oneDatabase, sandboxOn } = instancesSuite();

interface RawAnswer {
  status: number;
  body: string;
}

/**
 * One request written as is (any request target, any headers) from `localAddress`, and the
 * status and body of the answer; status 0 when the connection closed without one.
 */
function rawRequest(
  url: string,
  head: string,
  options: { body?: string; localAddress?: string } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: hostname,
      port: Number(port),
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    });
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(
      `${head}\r\nhost: cairn.test\r\nconnection: close\r\n${options.body === undefined ? "" : `content-length: ${Buffer.byteLength(options.body)}\r\n`}\r\n${options.body ?? ""}`,
    );
  });
}

/** Every message logged while the test runs (the logger is the process's). */
function capturedLog(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string) => void lines.push(message);
  return { lines, logger: { error: keep, warn: keep, info: keep, debug: keep } };
}

describe("a request target through the other instance", () => {
  it("reaches the sandbox the router reads from it: dot segments, an encoded id, absolute form", async (context) => {
    const { start } = await oneDatabase(context);
    const [a, b] = [await start(), await start()];
    const [onA, onB] = await Promise.all([sandboxOn(a), sandboxOn(b)]);
    const key = `x-api-key: ${apiKey}`;
    const targets = {
      // The first id names A's sandbox, the path B's: B serves it (before: A said "stopped").
      [`/api/sandboxes/${onA.id}/../${onB.id}/exec`]: 200,
      [`/api/sandboxes/${onA.id}/%2e%2e/${onB.id}/exec`]: 200,
      // And the other way round: A's, forwarded to A (before: B said "stopped").
      [`/api/sandboxes/${onB.id}/../${onA.id}/exec`]: 200,
      [`/api/sandboxes/%73${onA.id.slice(1)}/exec`]: 200,
      [`http://elsewhere.test/api/sandboxes/${onA.id}/exec`]: 200,
      // Not a sandbox path for the router either.
      [`//api/sandboxes/${onA.id}/exec`]: 404,
    };
    for (const [target, status] of Object.entries(targets)) {
      const answer = await rawRequest(b.server.url, `GET ${target} HTTP/1.1\r\n${key}`);
      expect({ target, status: answer.status, body: answer.body }).toMatchObject({ status });
      if (status === 200) expect(JSON.parse(answer.body)).toEqual({ execs: [] });
    }
    // A stop in absolute form through B stops A's sandbox (before: B answered "running" and
    // left it running).
    const stopped = await rawRequest(
      b.server.url,
      `DELETE http://elsewhere.test/api/sandboxes/${onA.id} HTTP/1.1\r\n${key}`,
    );
    expect(stopped.status).toBe(200);
    expect(JSON.parse(stopped.body)).toMatchObject({ id: onA.id, status: "stopped" });
    const onADirectly = (await (await a.call("GET", `/api/sandboxes/${onA.id}`)).json()) as {
      status: string;
    };
    expect(onADirectly.status).toBe("stopped");
  });
});

describe("the instance that runs the sandbox, through the other", () => {
  it("answers a body over the limit with its own 413, and is not said unreachable", async (context) => {
    const captured = capturedLog();
    const { start } = await oneDatabase(context, { logger: captured.logger });
    const [a, b] = [await start(), await start()];
    const created = await sandboxOn(a);
    const tooLarge = "x".repeat(11 * 1024 * 1024);
    for (const t of [a, b]) {
      const answer = await fetch(`${t.server.url}/api/sandboxes/${created.id}/tags`, {
        method: "PUT",
        headers: { "x-api-key": apiKey, "content-type": "application/json" },
        body: tooLarge,
      });
      expect(answer.status).toBe(413);
      expect(await answer.json()).toMatchObject({ error: "payload_too_large" });
    }
    expect(captured.lines.filter((line) => /could not forward/.test(line))).toEqual([]);
    // It still answers through B.
    expect((await b.call("GET", `/api/sandboxes/${created.id}`)).status).toBe(200);
  });

  it("that does not answer gives 503 without its address, to a caller with no key", async (context) => {
    const { database, start } = await oneDatabase(context);
    const [a, b] = [await start(), await start()];
    const created = await sandboxOn(a);
    // A still beats; the URL the others reach it at leads nowhere (an operator's mistake).
    const closed = createTcpServer();
    await new Promise<void>((listening) => closed.listen(0, "127.0.0.1", listening));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const sql = await openPostgres(database, { maxConnections: 1 });
    cleanups.push(() => sql.end());
    await sql`UPDATE runners SET url = ${`http://127.0.0.1:${port}`}`;
    for (const headers of [{}, { "x-api-key": apiKey }]) {
      const answer = await fetch(`${b.server.url}/api/sandboxes/${created.id}`, { headers });
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("5");
      const body = await answer.text();
      expect(JSON.parse(body)).toMatchObject({
        error: "sandbox_unavailable",
        reason: "runner_unavailable",
      });
      expect(body).not.toContain(String(port));
    }
  });

  it("reached at an URL that leads to another instance is not answered for by that one", async (context) => {
    const captured = capturedLog();
    const { start } = await oneDatabase(context, { logger: captured.logger });
    const b = await start();
    // A advertises B's URL (say both were given the load balancer's).
    const a = await start({ advertiseUrl: b.server.url });
    const created = await sandboxOn(a);
    for (const [method, path] of [
      ["GET", `/api/sandboxes/${created.id}/exec`],
      ["DELETE", `/api/sandboxes/${created.id}`],
    ] as const) {
      const answer = await b.call(method, path);
      // Before: 409 "it was stopped. Create a new sandbox", and a stop that stopped nothing.
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({
        reason: "runner_unavailable",
        message: expect.stringMatching(/--advertise-url/),
      });
    }
    expect((await a.call("GET", `/api/sandboxes/${created.id}`)).status).toBe(200);
    expect(
      ((await (await a.call("GET", `/api/sandboxes/${created.id}`)).json()) as { status: string })
        .status,
    ).toBe("running");
    expect(captured.lines.some((line) => /advertises .* leads here/.test(line))).toBe(true);
  });
});

describe("an owner that accepts connections and never answers", () => {
  /** A server that forwards every sandbox request to a socket that stays silent. */
  async function forwarderToSilentOwner(): Promise<{ url: string; held: Socket[] }> {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => void held.push(socket));
    await new Promise<void>((listening) => silent.listen(0, "127.0.0.1", listening));
    const server: Server = createHttpServer((_req, res) => res.writeHead(404).end());
    forwardToOwners(server, {
      runnerId: () => "runner-here",
      resources: [
        sandboxResource(
          () => false,
          async () => ({
            runnerId: "runner-silent",
            url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
            live: true,
          }),
        ),
      ],
      idleTimeoutMs: 200,
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    cleanups.push(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((done) => silent.close(done));
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held };
  }

  it("gives 503 to a request and to a WebSocket upgrade instead of holding them", async () => {
    const { url } = await forwarderToSilentOwner();
    const path = `/api/sandboxes/sbx_${"0".repeat(24)}`;
    const answer = await fetch(`${url}${path}`);
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ reason: "runner_unavailable" });
    const upgrade = await rawRequest(
      url,
      `GET ${path}/exec/e1/socket HTTP/1.1\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==`,
    );
    expect(upgrade.status).toBe(503);
  });

  it("cuts an answer the owner began and then left silent", async () => {
    const { url, held } = await forwarderToSilentOwner();
    const answered = new Promise<{ status: number; ended: string }>((resolve) => {
      const outgoing = request(`${url}/api/sandboxes/sbx_${"0".repeat(24)}/files?path=/x`);
      outgoing.on("response", (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode ?? 0, ended: "end" }));
        response.on("error", () => resolve({ status: response.statusCode ?? 0, ended: "cut" }));
        response.on("aborted", () => resolve({ status: response.statusCode ?? 0, ended: "cut" }));
      });
      outgoing.on("error", () => resolve({ status: 0, ended: "error" }));
      outgoing.end();
    });
    // The owner sends its headers and part of a body, then nothing.
    for (;;) {
      const socket = held[0];
      if (socket !== undefined) {
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart");
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await answered).toEqual({ status: 200, ended: "cut" });
  });
});

describe("failed authentications through the other instance", () => {
  // The owner sees only the forwarding instance's address. Without the client's address,
  // proven with the instances' shared key (forwarded-address.ts), a client sending wrong keys
  // through B would get B's address refused, and every other client B forwards with it.
  it("are counted against the client's address, not the forwarding instance's", async (context) => {
    // A token every 1000 s: nothing refills while the test runs.
    const failedAuthLimit = { requestsPerSecond: 0.001, burst: 3 };
    const { start } = await oneDatabase(context, { failedAuthLimit });
    const [a, b] = [await start(), await start()];
    const created = await sandboxOn(a);
    const path = `/api/sandboxes/${created.id}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      await rawRequest(b.server.url, `GET ${path} HTTP/1.1\r\nx-api-key: wrong-key-0123456789`, {
        localAddress: "127.0.0.5",
      });
    }
    const guesser = await rawRequest(b.server.url, `GET ${path} HTTP/1.1\r\nx-api-key: ${apiKey}`, {
      localAddress: "127.0.0.5",
    });
    expect(guesser.status).toBe(429);
    // Another client, with the right key, through B.
    const other = await rawRequest(b.server.url, `GET ${path} HTTP/1.1\r\nx-api-key: ${apiKey}`, {
      localAddress: "127.0.0.6",
    });
    expect(other.status).toBe(200);
  });
});
