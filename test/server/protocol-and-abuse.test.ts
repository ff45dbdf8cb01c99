import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "./helpers.js";

// What a careless or hostile client sends before the API proper: broken HTTP, huge headers,
// key guessing, WebSocket upgrades. Each is answered by the API's rules: a status from the
// documented list, the `{ error, message }` body where HTTP allows one, limits that hold.
const servers: TestServer[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
});

async function start(options: Parameters<typeof startTestServer>[0] = {}) {
  const server = await startTestServer(options);
  servers.push(server);
  return server;
}

/** Sends raw bytes and reads the whole answer (the server closes the connection). */
function raw(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString();
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

function parse(answer: string): { status: number; body: unknown } {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: body === "" ? undefined : JSON.parse(body) };
}

/** How a WebSocket upgrade went: 101, or the status it was refused with and its request id. */
function upgrade(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; requestId?: string; retryAfter?: string }>((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => {
      socket.close();
      resolve({ status: 101 });
    });
    socket.once("unexpected-response", (_request, response) => {
      response.resume();
      resolve({
        status: response.statusCode ?? 0,
        requestId: response.headers["x-request-id"] as string,
        retryAfter: response.headers["retry-after"] as string,
      });
    });
  });
}

describe("HTTP that never reaches a route", () => {
  it("answers headers that are too large with 431 and the API's error body", async () => {
    const server = await start();
    const answer = parse(
      await raw(
        server.server.url,
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(32 * 1024)}\r\n\r\n`,
      ),
    );
    expect(answer).toEqual({
      status: 431,
      body: {
        error: "headers_too_large",
        message: "the request's headers are larger than the server takes (16 KiB)",
      },
    });
  });

  it("answers bytes that are not HTTP with 400 and the API's error body", async () => {
    const server = await start();
    const answer = parse(await raw(server.server.url, "HELLO\r\nthis is not http\r\n\r\n"));
    expect(answer).toEqual({
      status: 400,
      body: { error: "invalid_request", message: "the request is not valid HTTP/1.1" },
    });
    // The server is still there.
    expect((await fetch(`${server.server.url}/health`)).status).toBe(200);
  });
});

describe("guessing keys", () => {
  it("limits failed authentications per client address, before any key is looked at", async () => {
    const server = await start({ failedAuthLimit: { requestsPerSecond: 0.5, burst: 3 } });
    const tries = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await server.call("GET", "/analytics/traces", undefined, {
        "x-api-key": `wrong-key-${attempt}-0123456789`,
      });
      tries.push(response.status);
    }
    expect(tries).toEqual([401, 401, 401, 429, 429]);
    // The right key from that address waits too: the limit is on the address.
    const right = await server.call("GET", "/analytics/traces");
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await right.json()).toEqual({
      error: "rate_limited",
      message: expect.stringMatching(
        /^too many failed authentications from this address; retry after \d+ s$/,
      ),
    });
  });
});

describe("guessing keys behind a load balancer", () => {
  const limit = { requestsPerSecond: 0.5, burst: 3 };
  const guess = (server: TestServer, client: string, attempt: number) =>
    server.call("GET", "/analytics/traces", undefined, {
      "x-api-key": `wrong-key-${attempt}-0123456789`,
      "x-forwarded-for": client,
    });

  it("counts each client the trusted proxy names: one guessing gets no other refused", async () => {
    // The test reaches the service over loopback, as a balancer on the same host would.
    const server = await start({ failedAuthLimit: limit, trustedProxies: ["loopback"] });
    const tries = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      tries.push((await guess(server, "203.0.113.7", attempt)).status);
    }
    expect(tries).toEqual([401, 401, 401, 429, 429]);
    const other = await server.call("GET", "/analytics/traces", undefined, {
      "x-forwarded-for": "198.51.100.20",
    });
    expect(other.status).toBe(200);
    // The address the balancer appended is the one counted: a client's own entries before it
    // (203.0.113.7, forged) do not move it to another count.
    const forged = await server.call("GET", "/analytics/traces", undefined, {
      "x-forwarded-for": "198.51.100.99, 203.0.113.7",
    });
    expect(forged.status).toBe(429);
  });

  it("believes no X-Forwarded-For from a peer it was not told to trust", async () => {
    const server = await start({ failedAuthLimit: limit, trustedProxies: ["10.0.0.0/8"] });
    for (let attempt = 0; attempt < 3; attempt++)
      await guess(server, `203.0.113.${attempt}`, attempt);
    // Every guess counted against the peer, whatever address each named.
    expect((await guess(server, "203.0.113.50", 9)).status).toBe(429);
  });

  it("refuses a trusted proxy that is no address or range, naming it", async () => {
    await expect(start({ trustedProxies: ["10.0.0.0/33"] })).rejects.toThrow(
      /trustedProxies \(--trusted-proxies\): .*10\.0\.0\.0\/33.*give addresses or CIDR ranges/,
    );
  });
});

describe("WebSocket upgrades", () => {
  it("go through the app: unknown paths 404, no key 401, each with its request id", async () => {
    const server = await start();
    const base = server.server.url.replace("http", "ws");
    expect(await upgrade(`${base}/api/nowhere`, { "x-api-key": server.apiKey })).toMatchObject({
      status: 404,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(await upgrade(`${base}/api/sandboxes/x/exec/y`, {})).toMatchObject({ status: 401 });
  });

  it("count against the API key's rate limit like any request", async () => {
    const server = await start({ rateLimit: { requestsPerSecond: 0.5, burst: 2 } });
    const base = server.server.url.replace("http", "ws");
    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      statuses.push(await upgrade(`${base}/api/nowhere`, { "x-api-key": server.apiKey }));
    }
    expect(statuses.map((each) => each.status)).toEqual([404, 404, 429]);
    expect(Number(statuses[2]?.retryAfter)).toBeGreaterThanOrEqual(1);
  });
});
