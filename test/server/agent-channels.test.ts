import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomHex } from "../../src/core/ids.js";
import type { AgentStreamPart } from "../../src/core/wire/agent-conversations.js";
import { parseMasterKey } from "../../src/sandbox/runner/secrets/master-key.js";
import { type AgentChannels, agentChannels } from "../../src/server/agents/channels/index.js";
import type { OutboundPolicy } from "../../src/server/agents/channels/outbound.js";
import type { AgentTurns } from "../../src/server/agents/turns.js";
import { ApiError } from "../../src/server/http/api-error.js";
import {
  type AuthVariables,
  FailedAuthentications,
  requireApiKey,
} from "../../src/server/http/auth.js";
import { errorResponse, notFoundResponse } from "../../src/server/http/error-handler.js";
import { openDatabase } from "../../src/server/store/database.js";
import { ProjectStore } from "../../src/server/store/projects.js";
import { SecretVault } from "../../src/server/store/secret-vault.js";
import { SpanStore } from "../../src/server/store/span-store.js";
import { sqliteStore } from "../../src/server/store/sqlite-store.js";
import { captureLog } from "../helpers/log.js";
import {
  postSlackEvent,
  postWebhook,
  type Receiver,
  slackEventCallback,
  startFakeSlack,
  startReceiver,
  webhookSignatureHolds,
} from "./agent-channel-helpers.js";

// The channels' routes over a real SQLite store, a real vault and real sockets, with an
// AgentTurns of this test's own in place of the agents' (a seam inside Cairn): what a channel
// takes, refuses, and sends back. test/agents/channels.test.ts runs them through a real agent.

type Send = Parameters<AgentTurns["send"]>[0];

/** Turns that echo their message, or wait, or fail, as a test says. */
class ScriptedTurns implements AgentTurns {
  readonly sent: Send[] = [];
  readonly notReady = new Set<string>();
  /** While set, a turn waits for it (or for its abort) before it answers. */
  hold: Promise<void> | undefined;
  failWith: string | undefined;
  private readonly conversations = new Map<string, string>();

  send(input: Send) {
    if (this.notReady.has(input.agentId)) {
      throw new ApiError("agent_not_ready", `agent ${input.agentId} is crashed`);
    }
    const key = this.key(input.agentId, input.channel);
    const conversationId =
      input.conversationId ??
      (key === undefined ? undefined : this.conversations.get(key)) ??
      `conv_${randomHex(12)}`;
    if (key !== undefined) this.conversations.set(key, conversationId);
    this.sent.push(input);
    const { hold, failWith } = this;
    async function* parts(): AsyncGenerator<AgentStreamPart> {
      const messageMetadata = { conversationId, traceId: `tr_${randomHex(16)}` };
      yield { type: "start", messageId: "m", messageMetadata };
      if (hold !== undefined) {
        await Promise.race([
          hold,
          new Promise((resolve) => input.signal?.addEventListener("abort", resolve)),
        ]);
      }
      if (input.signal?.aborted) {
        yield { type: "abort" };
        return;
      }
      if (failWith !== undefined) {
        yield { type: "error", errorText: failWith };
        return;
      }
      yield { type: "text-start", id: "t" };
      yield { type: "text-delta", id: "t", delta: "echo: " };
      yield { type: "text-delta", id: "t", delta: input.content };
      yield { type: "text-end", id: "t" };
      yield { type: "finish", messageMetadata };
    }
    return { conversationId, parts: parts() };
  }

  conversationFor(_projectId: string, agentId: string, channel: Send["channel"]) {
    const key = this.key(agentId, channel);
    return key === undefined ? undefined : this.conversations.get(key);
  }

  private key(agentId: string, channel: Send["channel"]) {
    return channel === undefined
      ? undefined
      : `${agentId}\n${channel.type}\n${channel.id}\n${channel.thread}`;
  }
}

interface ChannelsApp {
  url: string;
  db: DatabaseSync;
  turns: ScriptedTurns;
  channels: AgentChannels;
  keyOf: Record<"a" | "b", string>;
  agentOf: Record<"a" | "a2" | "b", string>;
  close(): Promise<void>;
}

const master = parseMasterKey(Buffer.alloc(32, 3).toString("base64"), "test");

async function startChannelsApp(
  options: { policy?: OutboundPolicy; failedAuthBurst?: number } = {},
): Promise<ChannelsApp> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-channels-"));
  const db = openDatabase(join(dir, "cairn.db"));
  const projects = new ProjectStore(db);
  const a = projects.createProject("a");
  const b = projects.createProject("b");
  const agentOf = {
    a: `agt_${randomHex(12)}`,
    a2: `agt_${randomHex(12)}`,
    b: `agt_${randomHex(12)}`,
  };
  for (const [agentId, projectId] of [
    [agentOf.a, a.project.id],
    [agentOf.a2, a.project.id],
    [agentOf.b, b.project.id],
  ] as const) {
    db.prepare(
      "INSERT INTO agents (id, project_id, name, config, state, created_at, updated_at) VALUES (?, ?, ?, '{}', 'ready', '', '')",
    ).run(agentId, projectId, agentId.slice(-8));
  }
  const vault = new SecretVault(db, master);
  const projectRepository = sqliteStore(db, new SpanStore(db)).projects;
  const failures = new FailedAuthentications({
    requestsPerSecond: 0.001,
    burst: options.failedAuthBurst ?? 1000,
  });
  const turns = new ScriptedTurns();
  const channels = agentChannels({
    db,
    vault,
    projects: projectRepository,
    agents: {
      get: (projectId, agentId) =>
        db.prepare("SELECT id FROM agents WHERE project_id = ? AND id = ?").get(projectId, agentId),
    },
    turns,
    failures,
    policy: options.policy ?? { hosts: new Map(), allowPrivate: true },
    retryDelaysMs: [5, 10, 20, 40],
  });
  const app = new Hono<{ Variables: AuthVariables }>();
  app.route("/", channels.incomingRoutes);
  app.use(requireApiKey(projectRepository, { alternative: channels.caller, failures }));
  app.route("/", channels.keyRoutes);
  // Stand-ins for the agents' own routes: say who the caller is.
  app.all("/v1/agents/:id/*", (c) =>
    c.json({ project: c.get("project").id, actor: c.get("actor") }),
  );
  app.all("/analytics/traces", (c) => c.json({ project: c.get("project").id }));
  app.onError(errorResponse);
  app.notFound(notFoundResponse);
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as { port: number };
  vault.create(a.project.id, "slack", []);
  return {
    url: `http://127.0.0.1:${port}`,
    db,
    turns,
    channels,
    keyOf: { a: a.apiKey, b: b.apiKey },
    agentOf,
    async close() {
      channels.close();
      await new Promise((resolve) => server.close(resolve));
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let t: ChannelsApp;
let hooks: Receiver;
let slack: Receiver;
const botToken = "xoxb-test-bot-token-1234567890";

beforeAll(async () => {
  t = await startChannelsApp();
  hooks = await startReceiver();
  slack = await startFakeSlack(botToken);
  const vault = new SecretVault(t.db, master);
  const projectA = (
    t.db.prepare("SELECT project_id FROM agents WHERE id = ?").get(t.agentOf.a) as {
      project_id: string;
    }
  ).project_id;
  vault.setAllowlist(projectA, "slack", [`127.0.0.1:${slack.port}`]);
  vault.setSecret(projectA, "slack", "BOT_TOKEN", botToken, null);
});

afterAll(async () => {
  await t?.close();
  await hooks?.close();
  await slack?.close();
});

function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  key: string = t.keyOf.a,
): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method,
    headers: {
      ...(key === "" ? {} : { authorization: `Bearer ${key}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

async function created(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body;
}

async function webhookChannel(agentId = t.agentOf.a) {
  const body = await created(
    await call("POST", `/v1/agents/${agentId}/channels/webhook`, {
      callbackUrl: `${hooks.url}/replies`,
    }),
  );
  return body as { channel: { id: string }; url: string; secret: string };
}

async function slackChannel(signingSecret = "slack-signing-secret-0123") {
  const body = await created(
    await call("POST", `/v1/agents/${t.agentOf.a}/channels/slack`, {
      botToken: "slack/BOT_TOKEN",
      signingSecret,
      apiBaseUrl: `${slack.url}/api`,
    }),
  );
  return body as { channel: { id: string }; url: string };
}

async function expectError(response: Response, status: number, message: RegExp | string) {
  const body = (await response.json()) as { error: string; message: string };
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(body.message).toMatch(message);
  return body;
}

describe("attaching channels", () => {
  it("names the channel types when given another", async () => {
    await expectError(
      await call("POST", `/v1/agents/${t.agentOf.a}/channels/telegram`, {}),
      400,
      /no channel type "telegram"; the types are web, webhook, slack/,
    );
  });

  it("finds no agent of another project", async () => {
    await expectError(
      await call("POST", `/v1/agents/${t.agentOf.b}/channels/web`),
      404,
      /no agent/,
    );
    await expectError(await call("GET", `/v1/agents/${t.agentOf.b}/channels`), 404, /no agent/);
  });

  it("makes a web channel: the messages URL and a token of an hour, listed without it", async () => {
    const before = Date.now();
    const body = (await created(await call("POST", `/v1/agents/${t.agentOf.a}/channels/web`))) as {
      channel: { id: string; type: string; origin: string | null };
      url: string;
      token: string;
      expiresAt: string;
    };
    expect(body.url).toBe(`${t.url}/v1/agents/${t.agentOf.a}/messages`);
    expect(body.token).toMatch(/^cairn_awt_/);
    expect(Date.parse(body.expiresAt) - before).toBeGreaterThanOrEqual(3_599_000);
    expect(Date.parse(body.expiresAt) - before).toBeLessThanOrEqual(3_601_000);
    expect(body.channel).toMatchObject({ type: "web", origin: null, url: body.url });
    const list = await (await call("GET", `/v1/agents/${t.agentOf.a}/channels`)).text();
    expect(list).toContain(body.channel.id);
    expect(list).not.toContain(body.token);
  });

  it("refuses a web token over 24 hours, and an origin with a path", async () => {
    const path = `/v1/agents/${t.agentOf.a}/channels/web`;
    await expectError(await call("POST", path, { expiresInSeconds: 86_401 }), 400, /24 hours/);
    await expectError(
      await call("POST", path, { origin: "https://app.example.com/chat" }),
      400,
      /origin/,
    );
    await expectError(
      await call("POST", path, { scopes: ["exec"] }),
      400,
      /"scopes" is not supported/,
    );
  });

  it("makes a webhook channel: its URL and its secret, shown once", async () => {
    const body = await webhookChannel();
    expect(body.url).toBe(`${t.url}/v1/channels/webhook/${body.channel.id}`);
    // Behind a proxy that ends TLS, the URL is the https one the proxy says it serves (Slack
    // and most webhook senders call https URLs only).
    const behindTls = await created(
      await call(
        "POST",
        `/v1/agents/${t.agentOf.a}/channels/webhook`,
        { callbackUrl: `${hooks.url}/replies` },
        { "x-forwarded-proto": "https" },
      ),
    );
    expect((behindTls as { url: string }).url).toMatch(
      new RegExp(`^https://${new URL(t.url).host}/v1/channels/webhook/`),
    );
    expect(body.secret).toMatch(/^whsec_/);
    const list = await (await call("GET", `/v1/agents/${t.agentOf.a}/channels`)).text();
    expect(list).toContain(`${hooks.url}/replies`);
    expect(list).not.toContain(body.secret);
    await expectError(
      await call("POST", `/v1/agents/${t.agentOf.a}/channels/webhook`, {
        callbackUrl: "ftp://example.com/in",
      }),
      400,
      /callbackUrl must be an http or https URL/,
    );
  });

  it("makes a Slack channel whose signing secret no answer carries", async () => {
    const signingSecret = "never-shown-signing-secret";
    const body = await slackChannel(signingSecret);
    expect(body.url).toBe(`${t.url}/v1/channels/slack/${body.channel.id}`);
    expect(JSON.stringify(body)).not.toContain(signingSecret);
    const list = await (await call("GET", `/v1/agents/${t.agentOf.a}/channels`)).text();
    expect(list).not.toContain(signingSecret);
    expect(list).toContain("slack/BOT_TOKEN");
    // A refused body is not quoted back.
    const refused = await call("POST", `/v1/agents/${t.agentOf.a}/channels/slack`, {
      botToken: "slack/BOT_TOKEN",
      signingSecret,
      extra: 1,
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).not.toContain(signingSecret);
  });

  it("takes the bot token only by reference, from a store that may send it to Slack's host", async () => {
    const path = `/v1/agents/${t.agentOf.a}/channels/slack`;
    const base = { signingSecret: "slack-signing-secret-0123", apiBaseUrl: `${slack.url}/api` };
    const pasted = await call("POST", path, { ...base, botToken: "xoxb-pasted-value" });
    const pastedBody = await expectError(pasted, 400, /botToken must name a secret/);
    expect(JSON.stringify(pastedBody)).not.toContain("xoxb-pasted-value");
    await expectError(
      await call("POST", path, { ...base, botToken: "nostore/BOT_TOKEN" }),
      404,
      /secret store "nostore"/,
    );
    await expectError(
      await call("POST", path, { ...base, botToken: "slack/OTHER_KEY" }),
      400,
      /has no key OTHER_KEY/,
    );
    // The token could be sent anywhere the caller names: only to the store's allowed hosts.
    await expectError(
      await call("POST", path, {
        ...base,
        botToken: "slack/BOT_TOKEN",
        apiBaseUrl: "https://collector.example.net/api",
      }),
      400,
      /may be sent only to 127\.0\.0\.1:\d+, and Slack's API is at collector\.example\.net/,
    );
  });

  it("deletes a channel once", async () => {
    const { channel } = await webhookChannel();
    const path = `/v1/agents/${t.agentOf.a}/channels/${channel.id}`;
    expect((await call("DELETE", path)).status).toBe(204);
    await expectError(await call("DELETE", path), 404, /has no channel/);
    // Not through another project's key either.
    const other = await webhookChannel();
    const response = await call(
      "DELETE",
      `/v1/agents/${t.agentOf.a}/channels/${other.channel.id}`,
      undefined,
      {},
      t.keyOf.b,
    );
    expect(response.status).toBe(404);
  });
});

describe("a web channel's token", () => {
  async function webToken(body: Record<string, unknown> = {}, agentId = t.agentOf.a) {
    const made = (await created(
      await call("POST", `/v1/agents/${agentId}/channels/web`, body),
    )) as { channel: { id: string }; token: string };
    return made;
  }

  it("reaches its agent's messages and conversations, as its project", async () => {
    const { token, channel } = await webToken();
    for (const [method, path] of [
      ["POST", "/messages"],
      ["GET", "/conversations"],
      ["GET", "/conversations/conv_0123"],
      ["POST", "/conversations/conv_0123/stop"],
    ] as const) {
      const response = await call(method, `/v1/agents/${t.agentOf.a}${path}`, undefined, {}, token);
      expect(response.status, `${method} ${path}`).toBe(200);
      expect(await response.json()).toMatchObject({ actor: `agent web token ${channel.id}` });
    }
  });

  it("reaches no other agent, even of its own project", async () => {
    const { token } = await webToken();
    await expectError(
      await call("POST", `/v1/agents/${t.agentOf.a2}/messages`, undefined, {}, token),
      403,
      `this agent web token is for agent ${t.agentOf.a}, not for ${t.agentOf.a2}`,
    );
    await expectError(
      await call("GET", `/v1/agents/${t.agentOf.b}/conversations`, undefined, {}, token),
      403,
      /not for/,
    );
  });

  it("reaches nothing else: the agent's record, its channels, the project's data", async () => {
    const { token, channel } = await webToken();
    for (const [method, path] of [
      ["GET", `/v1/agents/${t.agentOf.a}`],
      ["DELETE", `/v1/agents/${t.agentOf.a}`],
      ["GET", `/v1/agents/${t.agentOf.a}/channels`],
      ["POST", `/v1/agents/${t.agentOf.a}/channels/web`],
      ["DELETE", `/v1/agents/${t.agentOf.a}/channels/${channel.id}`],
      ["GET", `/v1/agents/${t.agentOf.a}/logs`],
      ["GET", "/analytics/traces"],
    ] as const) {
      const response = await call(method, path, undefined, {}, token);
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    // The channel is still there: the refused DELETE changed nothing.
    const list = await (await call("GET", `/v1/agents/${t.agentOf.a}/channels`)).text();
    expect(list).toContain(channel.id);
  });

  it("works from its origin only, when bound to one", async () => {
    const { token } = await webToken({ origin: "https://app.example.com" });
    const path = `/v1/agents/${t.agentOf.a}/conversations`;
    await expectError(await call("GET", path, undefined, {}, token), 403, /no origin/);
    await expectError(
      await call("GET", path, undefined, { origin: "https://evil.example.com" }, token),
      403,
      /bound to the origin https:\/\/app\.example\.com/,
    );
    const ok = await call("GET", path, undefined, { origin: "https://app.example.com" }, token);
    expect(ok.status).toBe(200);
  });

  it("stops working when its channel is deleted, or when it expires", async () => {
    const { token, channel } = await webToken();
    const path = `/v1/agents/${t.agentOf.a}/conversations`;
    expect((await call("GET", path, undefined, {}, token)).status).toBe(200);
    expect((await call("DELETE", `/v1/agents/${t.agentOf.a}/channels/${channel.id}`)).status).toBe(
      204,
    );
    await expectError(await call("GET", path, undefined, {}, token), 401, /not valid/);

    const second = await webToken();
    t.db
      .prepare("UPDATE agent_channels SET config = json_set(config, '$.expiresAt', ?) WHERE id = ?")
      .run(new Date(Date.now() - 1000).toISOString(), second.channel.id);
    await expectError(await call("GET", path, undefined, {}, second.token), 401, /not valid/);
  });
});

describe("a webhook channel", () => {
  const uniform = async (response: Response) => {
    expect(response.status).toBe(401);
    return response.text();
  };

  it("answers 202 with the conversation at once, and POSTs the signed reply to the callback", async () => {
    const { url, secret } = await webhookChannel();
    const response = await postWebhook(url, secret, { id: "m-1", text: "hello", thread: "th-1" });
    const accepted = (await response.json()) as { accepted: boolean; conversationId: string };
    expect(response.status).toBe(202);
    expect(accepted).toEqual({ accepted: true, conversationId: expect.stringMatching(/^conv_/) });
    const reply = await hooks.next();
    expect(reply.path).toBe("/replies");
    expect(
      webhookSignatureHolds(secret, String(reply.headers["cairn-signature"]), reply.body),
    ).toBe(true);
    expect(JSON.parse(reply.body)).toEqual({
      thread: "th-1",
      text: "echo: hello",
      conversationId: accepted.conversationId,
      inReplyTo: "m-1",
    });
    // The same thread continues the conversation; a message without one starts its own, its
    // thread its id.
    const again = await postWebhook(url, secret, { id: "m-2", text: "more", thread: "th-1" });
    expect(await again.json()).toMatchObject({ conversationId: accepted.conversationId });
    expect(JSON.parse((await hooks.next()).body)).toMatchObject({
      inReplyTo: "m-2",
      text: "echo: more",
    });
    const alone = (await (await postWebhook(url, secret, { id: "m-3", text: "new" })).json()) as {
      conversationId: string;
    };
    expect(alone.conversationId).not.toBe(accepted.conversationId);
    expect(JSON.parse((await hooks.next()).body)).toMatchObject({
      thread: "m-3",
      inReplyTo: "m-3",
    });
  });

  it("refuses a bad, stale, tampered or replayed request with one body, and runs nothing for it", async () => {
    const { url, secret } = await webhookChannel();
    const message = { id: "r-1", text: "hello" };
    const turnsBefore = t.turns.sent.length;
    const bodies = [
      await uniform(await postWebhook(url, "whsec_wrong", message)),
      await uniform(
        await postWebhook(url, secret, message, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      ),
      await uniform(
        await postWebhook(url, secret, message, { timestamp: Math.floor(Date.now() / 1000) + 301 }),
      ),
      // Signed, then changed in flight.
      await uniform(
        await postWebhook(url, secret, message, {
          signature: (await import("./agent-channel-helpers.js")).signWebhook(
            secret,
            JSON.stringify(message),
          ),
          body: JSON.stringify({ ...message, text: "rm -rf /" }),
        }),
      ),
      await uniform(await postWebhook(url, secret, message, { signature: "" })),
      await uniform(
        await postWebhook(`${t.url}/v1/channels/webhook/chn_${"0".repeat(24)}`, secret, message),
      ),
    ];
    expect(t.turns.sent.length).toBe(turnsBefore);
    expect((await postWebhook(url, secret, message)).status).toBe(202);
    await hooks.next();
    // The same id again, freshly signed: a replay.
    bodies.push(await uniform(await postWebhook(url, secret, message)));
    expect(t.turns.sent.length).toBe(turnsBefore + 1);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0] as string)).toEqual({
      error: "unauthorized",
      message: expect.stringMatching(/not signed with this channel's secret/),
    });
  });

  it("is not reached through another channel's URL, even one of its own agent", async () => {
    const { secret } = await webhookChannel();
    const other = await webhookChannel();
    const slackOne = await slackChannel();
    expect((await postWebhook(other.url, secret, { id: "x-1", text: "hi" })).status).toBe(401);
    const atSlackId = `${t.url}/v1/channels/webhook/${slackOne.channel.id}`;
    expect(
      (await postWebhook(atSlackId, "slack-signing-secret-0123", { id: "x-2", text: "hi" })).status,
    ).toBe(401);
  });

  it("says what is wrong with a signed body, and takes its id again after", async () => {
    const { url, secret } = await webhookChannel();
    await expectError(await postWebhook(url, secret, { id: "b-1" }), 400, /text/);
    await expectError(
      await postWebhook(url, secret, { id: "b-1", text: "x", to: "y" }),
      400,
      /"to" is not supported/,
    );
    await expectError(
      await postWebhook(url, secret, undefined, { body: "{not json" }),
      400,
      /not valid JSON/,
    );
    expect((await postWebhook(url, secret, { id: "b-1", text: "fine" })).status).toBe(202);
    await hooks.next();
  });

  it("answers the turn's refusal (agent not ready), and lets the same id be sent again", async () => {
    const { url, secret } = await webhookChannel();
    t.turns.notReady.add(t.agentOf.a);
    try {
      await expectError(
        await postWebhook(url, secret, { id: "n-1", text: "hi" }),
        409,
        /is crashed/,
      );
    } finally {
      t.turns.notReady.delete(t.agentOf.a);
    }
    expect((await postWebhook(url, secret, { id: "n-1", text: "hi" })).status).toBe(202);
    expect(JSON.parse((await hooks.next()).body)).toMatchObject({ inReplyTo: "n-1" });
  });

  it("sends a failed turn's error in the reply", async () => {
    const { url, secret } = await webhookChannel();
    t.turns.failWith = "the model endpoint answered 401";
    try {
      expect((await postWebhook(url, secret, { id: "e-1", text: "hi" })).status).toBe(202);
      expect(JSON.parse((await hooks.next()).body)).toMatchObject({
        inReplyTo: "e-1",
        text: "",
        error: "the model endpoint answered 401",
      });
    } finally {
      t.turns.failWith = undefined;
    }
  });

  it("runs a thread's messages one after another, each in the same conversation", async () => {
    const { url, secret } = await webhookChannel();
    let release = () => {};
    t.turns.hold = new Promise((resolve) => {
      release = resolve;
    });
    const first = (await (
      await postWebhook(url, secret, { id: "q-1", text: "one", thread: "q" })
    ).json()) as {
      conversationId: string;
    };
    t.turns.hold = undefined;
    const second = (await (
      await postWebhook(url, secret, { id: "q-2", text: "two", thread: "q" })
    ).json()) as {
      conversationId: string;
    };
    expect(second.conversationId).toBe(first.conversationId);
    release();
    const replies = [JSON.parse((await hooks.next()).body), JSON.parse((await hooks.next()).body)];
    expect(replies.map((each) => each.inReplyTo)).toEqual(["q-1", "q-2"]);
  });
});

describe("deleting a channel", () => {
  it("aborts its running turn, and no reply is sent for it", async () => {
    const { url, secret, channel } = await webhookChannel();
    let release = () => {};
    t.turns.hold = new Promise((resolve) => {
      release = resolve;
    });
    const before = hooks.received.length;
    expect((await postWebhook(url, secret, { id: "d-1", text: "hi" })).status).toBe(202);
    t.turns.hold = undefined;
    const turn = t.turns.sent.at(-1);
    expect(turn?.signal?.aborted).toBe(false);
    const path = `/v1/agents/${t.agentOf.a}/channels/${channel.id}`;
    expect((await call("DELETE", path)).status).toBe(204);
    expect(turn?.signal?.aborted).toBe(true);
    release();
    // Another channel's reply marks when the deleted one's would have come.
    const other = await webhookChannel();
    expect((await postWebhook(other.url, other.secret, { id: "d-2", text: "hi" })).status).toBe(
      202,
    );
    await hooks.next();
    const answered = hooks.received.slice(before).map((each) => JSON.parse(each.body).inReplyTo);
    expect(answered).toEqual(["d-2"]);
  });
});

describe("a webhook channel's replies", () => {
  let flaky: Receiver;
  let statuses: number[];

  beforeAll(async () => {
    statuses = [];
    flaky = await startReceiver(() => ({ status: statuses.shift() ?? 200 }));
  });
  afterAll(() => flaky?.close());

  async function flakyChannel() {
    return (await created(
      await call("POST", `/v1/agents/${t.agentOf.a}/channels/webhook`, {
        callbackUrl: `${flaky.url}/in`,
      }),
    )) as { url: string; secret: string };
  }

  it("are tried again on 5xx, each try signed afresh, until one is taken", async () => {
    const { url, secret } = await flakyChannel();
    statuses.push(503, 500, 200);
    expect((await postWebhook(url, secret, { id: "f-1", text: "hi" })).status).toBe(202);
    const tries = [await flaky.next(), await flaky.next(), await flaky.next()];
    for (const each of tries) {
      expect(
        webhookSignatureHolds(secret, String(each.headers["cairn-signature"]), each.body),
      ).toBe(true);
      expect(JSON.parse(each.body)).toMatchObject({ inReplyTo: "f-1" });
    }
  });

  it("are tried again when the connection is cut before an answer", async () => {
    const { url, secret } = await flakyChannel();
    statuses.push(0, 0, 200);
    expect((await postWebhook(url, secret, { id: "c-1", text: "hi" })).status).toBe(202);
    const tries = [await flaky.next(), await flaky.next(), await flaky.next()];
    expect(tries.map((each) => JSON.parse(each.body).inReplyTo)).toEqual(["c-1", "c-1", "c-1"]);
  });

  it("are not tried again on 4xx, and at most five times on 5xx", async () => {
    const log = captureLog();
    try {
      const { url, secret } = await flakyChannel();
      statuses.push(400);
      const before = flaky.received.length;
      expect((await postWebhook(url, secret, { id: "g-1", text: "hi" })).status).toBe(202);
      await flaky.next();
      // A second message marks when the first's delivery is over: its reply comes next.
      statuses.push(503, 503, 503, 503, 503);
      expect((await postWebhook(url, secret, { id: "g-2", text: "hi" })).status).toBe(202);
      for (let i = 0; i < 5; i++) await flaky.next();
      const third = await postWebhook(url, secret, { id: "g-3", text: "hi" });
      expect(third.status).toBe(202);
      const last = await flaky.next();
      expect(JSON.parse(last.body)).toMatchObject({ inReplyTo: "g-3" });
      const ids = flaky.received.slice(before).map((each) => JSON.parse(each.body).inReplyTo);
      expect(ids).toEqual(["g-1", "g-2", "g-2", "g-2", "g-2", "g-2", "g-3"]);
      expect(log.messages.map((each) => each.message).join("\n")).toMatch(
        /g-1 was not delivered to its callback URL: it answered 400 \(not tried again\)[\s\S]*g-2 was not delivered[^\n]*503 \(5 tries\)/,
      );
    } finally {
      log.restore();
    }
  });
});

describe("a Slack channel", () => {
  const signingSecret = "slack-signing-secret-0123";

  it("answers Slack's URL verification, signed, and nothing unsigned", async () => {
    const { url } = await slackChannel();
    const challenge = {
      token: "x",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      type: "url_verification",
    };
    const response = await postSlackEvent(url, signingSecret, challenge);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: challenge.challenge });
    expect((await postSlackEvent(url, "another-signing-secret", challenge)).status).toBe(401);
  });

  it("answers a message at once and replies in its thread with chat.postMessage", async () => {
    const { url } = await slackChannel();
    const event = {
      type: "message",
      user: "U1",
      text: "what is 2+2?",
      ts: "1700000001.000100",
      channel: "C1",
      channel_type: "channel",
    };
    const response = await postSlackEvent(url, signingSecret, slackEventCallback(event));
    expect(response.status).toBe(200);
    const posted = await slack.next();
    expect(posted.headers.authorization).toBe(`Bearer ${botToken}`);
    expect(JSON.parse(posted.body)).toEqual({
      channel: "C1",
      thread_ts: "1700000001.000100",
      text: "echo: what is 2+2?",
    });
    // A reply in that thread continues its conversation.
    const sentBefore = t.turns.sent.length;
    const inThread = {
      ...event,
      text: "and 3+3?",
      ts: "1700000002.000100",
      thread_ts: "1700000001.000100",
    };
    expect((await postSlackEvent(url, signingSecret, slackEventCallback(inThread))).status).toBe(
      200,
    );
    expect(JSON.parse((await slack.next()).body)).toMatchObject({ thread_ts: "1700000001.000100" });
    const [first, second] = t.turns.sent.slice(sentBefore - 1);
    expect(second?.channel?.thread).toBe(first?.channel?.thread);
    expect(second?.conversationId).toBeDefined();
  });

  it("takes an event once: Slack's retries and replays are answered and dropped", async () => {
    const { url } = await slackChannel();
    const payload = slackEventCallback({
      type: "app_mention",
      user: "U1",
      text: "<@UBOT> hello there",
      ts: "1700000003.000100",
      channel: "C1",
    });
    const before = t.turns.sent.length;
    expect((await postSlackEvent(url, signingSecret, payload)).status).toBe(200);
    expect((await postSlackEvent(url, signingSecret, payload, { retryNum: 1 })).status).toBe(200);
    expect((await postSlackEvent(url, signingSecret, payload)).status).toBe(200);
    // The same message as a `message` event (an app subscribed to both) is the same message.
    const asMessage = slackEventCallback({
      type: "message",
      user: "U1",
      text: "<@UBOT> hello there",
      ts: "1700000003.000100",
      channel: "C1",
    });
    expect((await postSlackEvent(url, signingSecret, asMessage)).status).toBe(200);
    expect(JSON.parse((await slack.next()).body)).toMatchObject({ text: "echo: hello there" });
    expect(t.turns.sent.length).toBe(before + 1);
    expect(t.turns.sent.at(-1)?.content).toBe("hello there");
  });

  it("ignores bots' messages (its own replies among them), edits and joins", async () => {
    const { url } = await slackChannel();
    const before = t.turns.sent.length;
    for (const event of [
      { type: "message", bot_id: "B1", text: "echo: hi", ts: "1700000004.000100", channel: "C1" },
      {
        type: "message",
        subtype: "bot_message",
        text: "hi",
        ts: "1700000005.000100",
        channel: "C1",
      },
      { type: "message", subtype: "message_changed", ts: "1700000006.000100", channel: "C1" },
      {
        type: "message",
        subtype: "channel_join",
        user: "U2",
        text: "joined",
        ts: "1700000007.000100",
        channel: "C1",
      },
      { type: "reaction_added", user: "U1", reaction: "thumbsup" },
    ]) {
      expect((await postSlackEvent(url, signingSecret, slackEventCallback(event))).status).toBe(
        200,
      );
    }
    expect(t.turns.sent.length).toBe(before);
  });

  it("refuses a bad, stale or tampered request with the webhook's one body", async () => {
    const { url } = await slackChannel();
    const payload = slackEventCallback({
      type: "message",
      user: "U1",
      text: "hi",
      ts: "1700000008.000100",
      channel: "C1",
    });
    const before = t.turns.sent.length;
    const stale = Math.floor(Date.now() / 1000) - 301;
    const responses = [
      await postSlackEvent(url, "wrong-signing-secret", payload),
      await postSlackEvent(url, signingSecret, payload, { timestamp: stale }),
      await postSlackEvent(url, signingSecret, payload, {
        body: JSON.stringify({ ...payload, event: { ...payload.event, text: "tampered" } }),
      }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        error: "unauthorized",
        message: expect.stringMatching(/not signed/),
      });
    }
    expect(t.turns.sent.length).toBe(before);
  });

  it("logs Slack's refusals ({ok: false, error})", async () => {
    const { url } = await slackChannel();
    const log = captureLog();
    try {
      const event = {
        type: "message",
        user: "U1",
        text: "hi",
        ts: "1700000009.000100",
        channel: "C_MISSING",
      };
      expect((await postSlackEvent(url, signingSecret, slackEventCallback(event))).status).toBe(
        200,
      );
      await slack.next();
      // The log line is written once Slack's answer is read; the next request's reply orders it.
      const next = { ...event, channel: "C2", ts: "1700000010.000100" };
      expect((await postSlackEvent(url, signingSecret, slackEventCallback(next))).status).toBe(200);
      await slack.next();
      expect(log.messages.map((each) => each.message).join("\n")).toMatch(
        /Slack's chat.postMessage failed: Slack answered ok: false, error "channel_not_found"/,
      );
    } finally {
      log.restore();
    }
  });
});

describe("outgoing addresses", () => {
  it("are public only, unless the service names them or allows private ones", async () => {
    const closed = await startChannelsApp({
      policy: {
        hosts: new Map([["hooks.internal", { address: "127.0.0.1", port: hooks.port }]]),
        allowPrivate: false,
      },
    });
    try {
      const path = `/v1/agents/${closed.agentOf.a}/channels/webhook`;
      const post = (callbackUrl: string) =>
        fetch(`${closed.url}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${closed.keyOf.a}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ callbackUrl }),
        });
      for (const target of [
        `http://127.0.0.1:${hooks.port}/replies`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/in",
        "http://[::1]:8080/in",
        "http://[::ffff:127.0.0.1]/in",
        "http://localhost/in",
      ]) {
        await expectError(
          await post(target),
          400,
          /private, loopback, link-local or metadata|no allowlist opens|does not resolve/,
        );
      }
      const named = (await created(await post("http://hooks.internal/replies"))) as {
        url: string;
        secret: string;
      };
      expect((await postWebhook(named.url, named.secret, { id: "p-1", text: "hi" })).status).toBe(
        202,
      );
      const reply = await hooks.next();
      expect(reply.headers.host).toBe("hooks.internal");
      expect(JSON.parse(reply.body)).toMatchObject({ inReplyTo: "p-1" });
    } finally {
      await closed.close();
    }
  });
});

describe("failed signatures", () => {
  it("count as failed authentications of the address: past the limit, 429", async () => {
    const strict = await startChannelsApp({ failedAuthBurst: 3 });
    try {
      const made = (await created(
        await fetch(`${strict.url}/v1/agents/${strict.agentOf.a}/channels/webhook`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${strict.keyOf.a}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ callbackUrl: `${hooks.url}/replies` }),
        }),
      )) as { url: string; secret: string };
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push(
          (await postWebhook(made.url, "whsec_guess", { id: `z-${i}`, text: "hi" })).status,
        );
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Even the right signature waits now: the address is told to.
      expect((await postWebhook(made.url, made.secret, { id: "z-9", text: "hi" })).status).toBe(
        429,
      );
    } finally {
      await strict.close();
    }
  });
});
