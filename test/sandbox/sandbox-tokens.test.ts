import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, SandboxUnavailableError } from "cairn-ai/sandbox";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../server/helpers.js";
import { pastExpiry, twoSandboxSuite } from "./access-helpers.js";
import { connection, needSandboxes } from "./helpers.js";

// Browser tokens attacked: a token reaches its one sandbox, as its scopes say, from its origin,
// until it expires or is revoked, and nothing else of the project.

const suite = twoSandboxSuite();

beforeAll(async () => {
  if (suite.t !== undefined) {
    await suite.sandbox.files.write("hello.txt", "hello");
    await suite.other.files.write("hello.txt", "other");
  }
});

interface Created {
  id: string;
  token: string;
  scopes: string[];
  origin: string | null;
  expiresAt: string;
}

async function createToken(target: Sandbox, body: Record<string, unknown>): Promise<Created> {
  const response = await (suite.t as TestServer).call(
    "POST",
    `/api/sandboxes/${target.id}/tokens`,
    body,
  );
  expect(response.status).toBe(201);
  return (await response.json()) as Created;
}

/** A request with the token as a browser sends it, `Authorization: Bearer`. */
function withToken(
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${(suite.t as TestServer).server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** Opens the exec WebSocket with `ws` and says how the upgrade went. */
async function openSocket(url: string, headers: Record<string, string> = {}): Promise<number> {
  const { WebSocket: NodeWebSocket } = await import("ws");
  return new Promise((resolve) => {
    const socket = new NodeWebSocket(url, { headers });
    socket.once("open", () => {
      socket.close();
      resolve(101);
    });
    socket.once("unexpected-response", (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
  });
}

/** Opens the exec WebSocket and keeps it open; `closed` resolves with its close code. */
async function holdSocket(url: string, headers: Record<string, string> = {}) {
  const { WebSocket: NodeWebSocket } = await import("ws");
  const socket = new NodeWebSocket(url, { headers });
  const closed = new Promise<number>((resolve) => socket.once("close", resolve));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`the upgrade was refused with ${response.statusCode}`)),
    );
  });
  return { socket, closed };
}

async function startExec(target: Sandbox): Promise<string> {
  const response = await (suite.t as TestServer).call("POST", `/api/sandboxes/${target.id}/exec`, {
    cmd: "sleep",
    args: ["30"],
  });
  return ((await response.json()) as { execId: string }).execId;
}

describe("a read token", () => {
  it("reads its sandbox's files and status, and refuses every write and exec (403)", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const { token, scopes } = await createToken(sandbox, { scopes: ["read"] });
    expect(scopes).toEqual(["read"]);
    const base = `/api/sandboxes/${sandbox.id}`;
    const read = await withToken(token, "GET", `${base}/files?path=hello.txt`);
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("hello");
    expect((await withToken(token, "GET", `${base}/files/stat?path=hello.txt`)).status).toBe(200);
    expect((await withToken(token, "GET", `${base}/files?path=/workspace`)).status).toBe(200);
    expect((await withToken(token, "GET", base)).status).toBe(200);
    const execId = await startExec(sandbox);
    const refused: Array<[string, string, unknown?]> = [
      ["PUT", `${base}/files?path=hello.txt`, "overwritten"],
      ["DELETE", `${base}/files?path=hello.txt`],
      ["POST", `${base}/files/mkdir`, { path: "made" }],
      ["POST", `${base}/files/move`, { from: "hello.txt", to: "moved.txt" }],
      ["POST", `${base}/exec`, { cmd: "true" }],
      ["GET", `${base}/exec`],
      ["GET", `${base}/exec/${execId}`],
    ];
    for (const [method, path, body] of refused) {
      const response = await withToken(token, method, path, body);
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect((await response.json()).message).toMatch(
        /has the scopes read; .* needs "(write|exec)"/,
      );
    }
    const socket = `${t.server.url.replace("http", "ws")}${base}/exec/${execId}`;
    expect(await openSocket(`${socket}?token=${token}`)).toBe(403);
    expect(await sandbox.files.readText("hello.txt")).toBe("hello");
    expect((await sandbox.files.list()).map((entry) => entry.name)).not.toContain("made");
  });

  it("gets GET signed URLs that end no later than it, and no PUT URL (403)", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const { token, expiresAt } = await createToken(sandbox, {
      scopes: ["read"],
      expiresInSeconds: 60,
    });
    const base = `/api/sandboxes/${sandbox.id}/files/signed-url`;
    const asked = await withToken(token, "POST", base, {
      path: "hello.txt",
      method: "GET",
      expiresInSeconds: 3600,
    });
    expect(asked.status).toBe(200);
    const signed = (await asked.json()) as { url: string; expiresAt: string };
    expect(Date.parse(signed.expiresAt)).toBeLessThanOrEqual(Date.parse(expiresAt) + 1000);
    expect(await (await fetch(signed.url)).text()).toBe("hello");
    const put = await withToken(token, "POST", base, { path: "hello.txt", method: "PUT" });
    expect(put.status).toBe(403);
    expect((await put.json()).message).toContain('"write" scope');
  });

  it("reaches no other sandbox and no other API of the project (403)", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    const { token } = await createToken(sandbox, { scopes: ["read", "write", "exec"] });
    const elsewhere: Array<[string, string, unknown?]> = [
      ["GET", `/api/sandboxes/${other.id}/files?path=hello.txt`],
      ["GET", `/api/sandboxes/${other.id}`],
      ["POST", `/api/sandboxes/${other.id}/exec`, { cmd: "true" }],
      ["GET", "/api/sandboxes"],
      ["POST", "/api/sandboxes", {}],
      ["DELETE", `/api/sandboxes/${sandbox.id}`],
      ["PATCH", `/api/sandboxes/${sandbox.id}`, { timeout: 60 }],
      ["PUT", `/api/sandboxes/${sandbox.id}/tags`, { tags: { a: "b" } }],
      ["POST", `/api/sandboxes/${sandbox.id}/tokens`, { scopes: ["read"] }],
      ["GET", `/api/sandboxes/${sandbox.id}/tokens`],
      ["POST", `/api/sandboxes/${other.id}/files/signed-url`, { path: "a", method: "GET" }],
      ["GET", "/api/usage"],
      ["GET", "/api/secret-stores"],
      ["POST", "/api/secret-stores", { name: "s", allowlist: ["example.com"] }],
      ["GET", "/analytics/traces"],
      ["POST", "/traces", { spans: [] }],
      ["GET", "/versions"],
    ];
    for (const [method, path, body] of elsewhere) {
      const response = await withToken(token, method, path, body);
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect((await response.json()).error).toBe("forbidden");
    }
    // The same token in X-API-Key, where API keys go, is no API key either.
    const asKey = await fetch(`${t.server.url}/analytics/traces`, {
      headers: { "x-api-key": token },
    });
    expect(asKey.status).toBe(403);
    // In the query it counts only on a WebSocket upgrade (which cannot send headers).
    const inQuery = await fetch(
      `${t.server.url}/api/sandboxes/${sandbox.id}/files?path=hello.txt&token=${token}`,
    );
    expect(inQuery.status).toBe(401);
    expect(await other.files.readText("hello.txt")).toBe("other");
  });
});

describe("write and exec tokens", () => {
  it("write files, and run and follow commands, through the SDK connected with the token", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    const { token } = await createToken(sandbox, { scopes: ["read", "write", "exec"] });
    const browser = await Sandbox.connect(sandbox.id, { endpoint: t.server.url, token });
    await browser.files.write("from-token.txt", "written");
    expect(await browser.files.readText("from-token.txt")).toBe("written");
    await browser.files.mkdir("dir");
    await browser.files.move("from-token.txt", "dir/moved.txt");
    expect(await sandbox.files.readText("dir/moved.txt")).toBe("written");
    const run = await browser.run("sh", { args: ["-c", "cat dir/moved.txt; echo ' ran'"] });
    expect(run).toMatchObject({ exitCode: 0, stdout: "written ran\n" });
    await browser.files.remove("dir");
    // Neither the SDK nor the token can make a sandbox or act on another.
    await expect(Sandbox.create({ endpoint: t.server.url, token })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(
      Sandbox.connect(other.id, { endpoint: t.server.url, token }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(browser.createToken({ scopes: ["read"] })).rejects.toMatchObject({
      code: "forbidden",
    });
  });

  it("an exec token opens the exec WebSocket with ?token=, a write token does not", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    const exec = await createToken(sandbox, { scopes: ["exec"] });
    const write = await createToken(sandbox, { scopes: ["write"] });
    const execId = await startExec(sandbox);
    const socket = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${execId}`;
    expect(await openSocket(`${socket}?token=${exec.token}`)).toBe(101);
    expect(await openSocket(socket, { authorization: `Bearer ${exec.token}` })).toBe(101);
    expect(await openSocket(`${socket}?token=${write.token}`)).toBe(403);
    const otherExec = await startExec(other);
    const otherSocket = `${t.server.url.replace("http", "ws")}/api/sandboxes/${other.id}/exec/${otherExec}`;
    expect(await openSocket(`${otherSocket}?token=${exec.token}`)).toBe(403);
    // A write token writes, and reads nothing it was not given.
    expect(
      (await withToken(write.token, "PUT", `/api/sandboxes/${sandbox.id}/files?path=w.txt`, "w"))
        .status,
    ).toBe(201);
    expect(
      (await withToken(write.token, "GET", `/api/sandboxes/${sandbox.id}/files?path=w.txt`)).status,
    ).toBe(403);
  });
});

describe("the exec tokens a sandbox token is given", () => {
  it("work only while the sandbox token does, and from its origin", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const origin = "https://app.example.com";
    const parent = await createToken(sandbox, { scopes: ["exec"], origin });
    const started = await withToken(
      parent.token,
      "POST",
      `/api/sandboxes/${sandbox.id}/exec`,
      { cmd: "sleep", args: ["30"] },
      { origin },
    );
    expect(started.status).toBe(201);
    const { execId, token } = (await started.json()) as { execId: string; token: string };
    const socket = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${execId}?token=${token}`;
    expect(await openSocket(socket, { origin })).toBe(101);
    expect(await openSocket(socket, { origin: "https://evil.example.com" })).toBe(403);
    const held = await holdSocket(socket, { origin });
    const direct = await holdSocket(
      `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${execId}?token=${parent.token}`,
      { origin },
    );
    await sandbox.revokeToken(parent.id);
    // Revoked: the sockets it holds close at once (policy violation), and none opens again.
    expect(await held.closed).toBe(1008);
    expect(await direct.closed).toBe(1008);
    expect(await openSocket(socket, { origin })).toBe(401);
    // One given to the API key lives its own hour.
    const keyed = await (
      await t.call("POST", `/api/sandboxes/${sandbox.id}/exec`, { cmd: "sleep", args: ["30"] })
    ).json();
    const keyedSocket = `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${keyed.execId}?token=${keyed.token}`;
    expect(await openSocket(keyedSocket)).toBe(101);
  });
});

describe("a token's life", () => {
  it("is shown once, listed without its value, and stored only as a hash", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const created = await createToken(sandbox, { scopes: ["read"], expiresInSeconds: 600 });
    expect(created.token).toMatch(/^cairn_sbt_[A-Za-z0-9_-]{43}$/);
    expect(created.id).toMatch(/^sbt_[0-9a-f]{24}$/);
    const lifetime = Date.parse(created.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(590_000);
    expect(lifetime).toBeLessThanOrEqual(600_000);
    const listed = await sandbox.listTokens();
    const entry = listed.find((each) => each.id === created.id);
    expect(entry).toMatchObject({ id: created.id, scopes: ["read"], revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const files = readdirSync(t.dataDir).filter((name) => name.startsWith("cairn.db"));
    for (const name of files) {
      expect(readFileSync(join(t.dataDir, name)).includes(created.token)).toBe(false);
    }
  });

  it("ends at once when revoked, and when it expires (401)", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    const path = `/api/sandboxes/${sandbox.id}/files?path=hello.txt`;
    const revoked = await createToken(sandbox, { scopes: ["read"] });
    expect((await withToken(revoked.token, "GET", path)).status).toBe(200);
    const answer = await sandbox.revokeToken(revoked.id);
    expect(answer.revokedAt).not.toBeNull();
    const afterRevoke = await withToken(revoked.token, "GET", path);
    expect(afterRevoke.status).toBe(401);
    expect((await afterRevoke.json()).message).toMatch(/unknown, expired or revoked/);
    const unknown = await t.call("DELETE", `/api/sandboxes/${sandbox.id}/tokens/sbt_nope`);
    expect(unknown.status).toBe(404);
    // Another sandbox's token cannot be revoked through this one.
    const others = await createToken(other, { scopes: ["read"] });
    expect(
      (await t.call("DELETE", `/api/sandboxes/${sandbox.id}/tokens/${others.id}`)).status,
    ).toBe(404);

    const expiring = await createToken(sandbox, { scopes: ["read", "exec"], expiresInSeconds: 1 });
    expect((await withToken(expiring.token, "GET", path)).status).toBe(200);
    const execId = await startExec(sandbox);
    const held = await holdSocket(
      `${t.server.url.replace("http", "ws")}/api/sandboxes/${sandbox.id}/exec/${execId}?token=${expiring.token}`,
    );
    await pastExpiry(expiring.expiresAt);
    expect((await withToken(expiring.token, "GET", path)).status).toBe(401);
    // Expired: the socket it held has closed too.
    expect(await held.closed).toBe(1008);
    // A made-up token of the right shape is as invalid.
    const forged = `cairn_sbt_${"A".repeat(43)}`;
    expect((await withToken(forged, "GET", path)).status).toBe(401);
  });

  it("dies with its sandbox", async (context) => {
    const { t } = suite;
    needSandboxes(context, t);
    const doomed = await Sandbox.create(connection(t));
    const { token, id } = await createToken(doomed, { scopes: ["read"] });
    expect((await withToken(token, "GET", `/api/sandboxes/${doomed.id}`)).status).toBe(200);
    await doomed.kill();
    const after = await withToken(token, "GET", `/api/sandboxes/${doomed.id}`);
    expect(after.status).toBe(401);
    expect((await doomed.listTokens()).find((each) => each.id === id)?.revokedAt).not.toBeNull();
    // And none is made for a sandbox that has stopped.
    await expect(doomed.createToken({ scopes: ["read"] })).rejects.toBeInstanceOf(
      SandboxUnavailableError,
    );
  });

  it("bound to an origin, works only from that origin (403 from any other, or none)", async (context) => {
    const { t, sandbox } = suite;
    needSandboxes(context, t);
    const { token, origin } = await createToken(sandbox, {
      scopes: ["read"],
      origin: "https://app.example.com",
    });
    expect(origin).toBe("https://app.example.com");
    const path = `/api/sandboxes/${sandbox.id}/files?path=hello.txt`;
    const from = (value?: string) =>
      withToken(token, "GET", path, undefined, value === undefined ? {} : { origin: value });
    expect((await from("https://app.example.com")).status).toBe(200);
    for (const wrong of [
      "https://evil.example.com",
      "https://app.example.com.evil.net",
      "http://app.example.com",
      "https://app.example.com:8443",
      "null",
      undefined,
    ]) {
      const response = await from(wrong);
      expect([wrong, response.status]).toEqual([wrong, 403]);
      expect((await response.json()).message).toMatch(
        /bound to the origin https:\/\/app\.example\.com/,
      );
    }
  });

  it("refuses bad requests for tokens, naming the field", async (context) => {
    const { t, sandbox, other } = suite;
    needSandboxes(context, t);
    const cases: Array<[unknown, RegExp]> = [
      [{}, /scopes/],
      [{ scopes: [] }, /at least one scope/],
      [{ scopes: ["admin"] }, /each scope must be "read", "write" or "exec"/],
      [{ scopes: ["read", "read"] }, /scopes lists a scope twice/],
      [{ scopes: ["read"], expiresInSeconds: 0 }, /expiresInSeconds must be between 1 and 86400/],
      [
        { scopes: ["read"], expiresInSeconds: 90_000 },
        /expiresInSeconds must be between 1 and 86400/,
      ],
      [
        { scopes: ["read"], origin: "https://app.example.com/page" },
        /origin must be a page's origin/,
      ],
      [{ scopes: ["read"], origin: "app.example.com" }, /origin must be a page's origin/],
      [{ scopes: ["read"], sandbox: other.id }, /sandbox/],
    ];
    for (const [body, message] of cases) {
      const response = await (suite.t as TestServer).call(
        "POST",
        `/api/sandboxes/${sandbox.id}/tokens`,
        body,
      );
      expect([body, response.status]).toEqual([body, 400]);
      expect((await response.json()).message).toMatch(message);
    }
  });
});
