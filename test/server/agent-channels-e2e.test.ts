import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeOpenAI, FakeStep } from "../helpers/fake-openai.js";
import { type FakeRequest, startFakeOpenAI } from "../helpers/fake-openai.js";
import { needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import {
  postSlackEvent,
  postWebhook,
  type Receiver,
  slackEventCallback,
  startFakeSlack,
  startReceiver,
  webhookSignatureHolds,
} from "./agent-channel-helpers.js";
import { createAgent, waitUntilReady } from "./agents-helpers.js";
import { sendMessage } from "./agents-turns-helpers.js";
import type { TestServer } from "./helpers.js";

// Channels end to end: a real service with sandboxes, a real agent whose core calls a local
// OpenAI-compatible model through its egress proxy, a webhook receiver and a local server that
// speaks Slack's Web API, both reached by the service through egress hosts (as an operator
// names a host on its own network). The model answers "echo: " and the last user message, or
// to a new message "run: <command>", a run_command of that command.

const modelKey = "sk-channels-model-key-8c7b6a5948372615";
const botToken = "xoxb-channels-bot-token-0123456789";
const signingSecret = "channels-e2e-signing-secret";

function lastUserText(request: FakeRequest): string {
  const { messages = [] } = request.body as {
    messages?: Array<{ role: string; content: unknown }>;
  };
  const last = messages.filter((message) => message.role === "user").at(-1);
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
}

function modelAnswer(request: FakeRequest): FakeStep {
  const text = lastUserText(request);
  const { messages = [] } = request.body as { messages?: Array<{ role: string }> };
  if (messages.at(-1)?.role === "user" && text.startsWith("run: ")) {
    const command = text.slice("run: ".length);
    return {
      toolCalls: [{ id: "call_run", name: "run_command", arguments: JSON.stringify({ command }) }],
    };
  }
  return { text: `echo: ${text}` };
}

let t: TestServer | undefined;
let model: FakeOpenAI;
let hooks: Receiver;
let slack: Receiver;
let agentId: string;

beforeAll(async () => {
  model = await startFakeOpenAI(Array.from({ length: 100 }, () => modelAnswer));
  hooks = await startReceiver();
  slack = await startFakeSlack(botToken);
  t = await startSandboxServer({
    egress: {
      hosts: {
        "model.test.internal": new URL(model.baseURL).host,
        "hooks.test.internal": `127.0.0.1:${hooks.port}`,
        "slack.test.internal": `127.0.0.1:${slack.port}`,
      },
    },
  });
  if (t !== undefined) {
    await t.call("POST", "/api/secret-stores", {
      name: "slack",
      allowlist: ["slack.test.internal"],
    });
    await t.call("PUT", "/api/secret-stores/slack/secrets/BOT_TOKEN", { value: botToken });
    agentId = await readyAgent(t);
  }
}, 120_000);

/** An agent on the local model (its key in the store `models`), once it is ready. */
async function readyAgent(server: TestServer): Promise<string> {
  await server.call("POST", "/api/secret-stores", {
    name: "models",
    allowlist: ["model.test.internal"],
  });
  await server.call("PUT", "/api/secret-stores/models/secrets/MODEL_KEY", { value: modelKey });
  const created = await createAgent(server, {
    name: "channels",
    instructions: "Answer briefly.",
    model: {
      baseURL: "http://model.test.internal/v1",
      model: "gpt-4o-mini",
      apiKey: "models/MODEL_KEY",
    },
  });
  return (await waitUntilReady(server, created.id)).id;
}

afterAll(async () => {
  await t?.stop();
  await model?.close();
  await hooks?.close();
  await slack?.close();
});

async function attach(server: TestServer, type: string, body?: unknown) {
  const response = await server.call("POST", `/v1/agents/${agentId}/channels/${type}`, body);
  const answer = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(answer)).toBe(201);
  return answer;
}

/** The text of a reply streamed from POST …/messages. */
async function streamedText(response: Response): Promise<string> {
  const body = await response.text();
  return body
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string })
    .filter((part) => part.type === "text-delta")
    .map((part) => part.delta)
    .join("");
}

describe("agent channels through a real agent", () => {
  it("web: the token talks to its agent from its origin, and to nothing else", async (context) => {
    needSandboxes(context, t);
    const { url, token } = (await attach(t, "web", { origin: "https://app.example.com" })) as {
      url: string;
      token: string;
    };
    const send = (target: string, origin: string) =>
      fetch(target, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", origin },
        body: JSON.stringify({ content: "hello from the page" }),
      });
    const reply = await send(url, "https://app.example.com");
    expect(reply.status).toBe(200);
    const conversationId = reply.headers.get("x-cairn-conversation-id");
    expect(await streamedText(reply)).toBe("echo: hello from the page");
    const list = await fetch(`${t.server.url}/v1/agents/${agentId}/conversations`, {
      headers: { authorization: `Bearer ${token}`, origin: "https://app.example.com" },
    });
    expect(JSON.stringify(await list.json())).toContain(String(conversationId));
    expect((await send(url, "https://evil.example.com")).status).toBe(403);
    const otherAgent = `${t.server.url}/v1/agents/agt_${"0".repeat(24)}/messages`;
    expect((await send(otherAgent, "https://app.example.com")).status).toBe(403);
    const record = await fetch(`${t.server.url}/v1/agents/${agentId}`, {
      headers: { authorization: `Bearer ${token}`, origin: "https://app.example.com" },
    });
    expect(record.status).toBe(403);
  });

  it("webhook: a signed message gets a signed reply, its thread keeps its conversation", async (context) => {
    needSandboxes(context, t);
    const { url, secret, channel } = (await attach(t, "webhook", {
      callbackUrl: "http://hooks.test.internal/replies",
    })) as { url: string; secret: string; channel: { id: string } };
    const first = await postWebhook(url, secret, {
      id: "w-1",
      text: "first",
      thread: "support-42",
    });
    expect(first.status).toBe(202);
    const { conversationId } = (await first.json()) as { conversationId: string };
    const reply = await hooks.next();
    expect(reply.headers.host).toBe("hooks.test.internal");
    expect(
      webhookSignatureHolds(secret, String(reply.headers["cairn-signature"]), reply.body),
    ).toBe(true);
    expect(JSON.parse(reply.body)).toEqual({
      thread: "support-42",
      text: "echo: first",
      conversationId,
      inReplyTo: "w-1",
    });
    const second = await postWebhook(url, secret, {
      id: "w-2",
      text: "second",
      thread: "support-42",
    });
    expect(await second.json()).toMatchObject({ conversationId });
    expect(JSON.parse((await hooks.next()).body)).toMatchObject({
      text: "echo: second",
      inReplyTo: "w-2",
    });
    // The model saw the thread's history: the first message and its answer.
    const history = JSON.stringify(model.requests.at(-1)?.body);
    expect(history).toContain("first");
    expect(history).toContain("echo: first");
    // Attacks: replayed, wrong secret, stale.
    expect(
      (await postWebhook(url, secret, { id: "w-2", text: "again", thread: "support-42" })).status,
    ).toBe(401);
    expect((await postWebhook(url, "whsec_guess", { id: "w-3", text: "x" })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 600;
    expect(
      (await postWebhook(url, secret, { id: "w-4", text: "x" }, { timestamp: stale })).status,
    ).toBe(401);
    const { conversations } = (await (
      await t.call("GET", `/v1/agents/${agentId}/conversations`)
    ).json()) as { conversations: Array<{ id: string; channel?: unknown; messageCount: number }> };
    expect(conversations.find((each) => each.id === conversationId)).toMatchObject({
      channel: { type: "webhook", id: channel.id },
      messageCount: 4,
    });
  });

  it("slack: verified, answered in the thread with chat.postMessage, each event once", async (context) => {
    needSandboxes(context, t);
    const { url } = (await attach(t, "slack", {
      botToken: "slack/BOT_TOKEN",
      signingSecret,
      apiBaseUrl: "http://slack.test.internal/api",
    })) as { url: string };
    const verification = await postSlackEvent(url, signingSecret, {
      type: "url_verification",
      token: "x",
      challenge: "challenge-0123",
    });
    expect(await verification.json()).toEqual({ challenge: "challenge-0123" });
    const event = slackEventCallback({
      type: "app_mention",
      user: "U1",
      text: "<@UBOT> what is up?",
      ts: "1700000100.000200",
      channel: "C42",
    });
    const before = model.requests.length;
    expect((await postSlackEvent(url, signingSecret, event)).status).toBe(200);
    const posted = await slack.next();
    expect(posted.headers.authorization).toBe(`Bearer ${botToken}`);
    expect(JSON.parse(posted.body)).toEqual({
      channel: "C42",
      thread_ts: "1700000100.000200",
      text: "echo: what is up?",
    });
    // Slack's retry of the same event: answered, not run again.
    expect((await postSlackEvent(url, signingSecret, event, { retryNum: 1 })).status).toBe(200);
    expect((await postSlackEvent(url, "wrong-secret", event)).status).toBe(401);
    const inThread = slackEventCallback({
      type: "message",
      user: "U1",
      text: "and then?",
      ts: "1700000101.000300",
      thread_ts: "1700000100.000200",
      channel: "C42",
    });
    expect((await postSlackEvent(url, signingSecret, inThread)).status).toBe(200);
    expect(JSON.parse((await slack.next()).body)).toMatchObject({ text: "echo: and then?" });
    expect(model.requests.length).toBe(before + 2);
    expect(JSON.stringify(model.requests.at(-1)?.body)).toContain("what is up?");
    // The bot token never reached the sandbox's model calls.
    expect(JSON.stringify(model.requests)).not.toContain(botToken);
  });
});

describe("a web token's conversations", () => {
  const unknown = `conv_${"0".repeat(24)}`;

  /** A request of the agent's as `key` makes it: its status and body. */
  async function ask(key: string, method: string, path: string, body?: unknown) {
    const server = t as TestServer;
    const response = await fetch(`${server.server.url}/v1/agents/${agentId}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** A conversation's id, as its reply's header names it. */
  async function started(key: string, content: string): Promise<string> {
    const reply = await sendMessage(t as TestServer, agentId, { content }, undefined, key);
    await reply.end();
    expect(reply.response.status).toBe(200);
    expect(reply.parts.at(-1)?.type).toBe("finish");
    return String(reply.response.headers.get("x-cairn-conversation-id"));
  }

  const ids = (body: Record<string, unknown>) =>
    (body.conversations as Array<{ id: string }>).map((each) => each.id).sort();

  it("are those started with its channel: any other is 404 to read, send to and stop, as an unknown one", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, t);
    const server = t as TestServer;
    const a = (await attach(server, "web")) as { token: string; channel: { id: string } };
    const b = (await attach(server, "web")) as { token: string; channel: { id: string } };
    const fromA = await started(a.token, "from A");
    const fromApi = await started(server.apiKey, "from the API");
    // B's conversation is answering: a command runs in its turn.
    const running = await sendMessage(
      server,
      agentId,
      { content: "run: sleep 60" },
      undefined,
      b.token,
    );
    await running.until("tool-input-available");
    const fromB = String(running.response.headers.get("x-cairn-conversation-id"));

    // Each web token lists its channel's conversations only; the API key lists them all.
    expect(ids((await ask(a.token, "GET", "/conversations")).body)).toEqual([fromA]);
    expect(ids((await ask(b.token, "GET", "/conversations")).body)).toEqual([fromB]);
    const all = await ask(server.apiKey, "GET", "/conversations");
    expect(ids(all.body)).toEqual(expect.arrayContaining([fromA, fromB, fromApi]));
    const own = await ask(a.token, "GET", `/conversations/${fromA}`);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      id: fromA,
      channel: { type: "web", id: a.channel.id },
      messages: [{ role: "user" }, { role: "assistant" }],
    });

    const stored = async () =>
      Promise.all([
        ask(server.apiKey, "GET", "/conversations"),
        ask(server.apiKey, "GET", `/conversations/${fromB}`),
        ask(server.apiKey, "GET", `/conversations/${fromApi}`),
      ]);
    const before = await stored();
    const asked = model.requests.length;
    const attempts = (cid: string) =>
      [
        ["GET", `/conversations/${cid}`, undefined],
        ["POST", "/messages", { conversationId: cid, content: "let me in" }],
        ["POST", `/conversations/${cid}/stop`, undefined],
      ] as const;
    for (const other of [fromB, fromApi]) {
      for (const [index, [method, path, body]] of attempts(other).entries()) {
        const [, unknownPath, unknownBody] = attempts(unknown)[index] ?? [];
        const refused = await ask(a.token, method, path, body);
        const asUnknown = await ask(a.token, method, String(unknownPath), unknownBody);
        expect(refused.status, `${method} ${path}`).toBe(404);
        expect(asUnknown.status).toBe(404);
        expect(JSON.stringify(refused.body).replaceAll(other, unknown)).toBe(
          JSON.stringify(asUnknown.body),
        );
      }
    }
    // Nor the other way round: B's token does not reach A's conversation.
    expect((await ask(b.token, "GET", `/conversations/${fromA}`)).status).toBe(404);
    // Nothing changed: no message stored, no turn run, B's turn still running.
    expect(await stored()).toEqual(before);
    expect(model.requests.length).toBe(asked);
    expect((await ask(b.token, "POST", `/conversations/${fromB}/stop`)).body).toEqual({
      stopped: true,
    });
    await running.end();
    expect(running.parts.at(-1)?.type).toBe("abort");
    // The API key reaches every conversation, and A's token continues its own.
    expect((await ask(server.apiKey, "GET", `/conversations/${fromB}`)).status).toBe(200);
    const again = await sendMessage(
      server,
      agentId,
      { conversationId: fromA, content: "again" },
      undefined,
      a.token,
    );
    await again.end();
    expect(again.parts.at(-1)?.type).toBe("finish");
    expect(ids((await ask(a.token, "GET", "/conversations")).body)).toEqual([fromA]);
  });
});

describe("agents.allowPrivateCallbacks", () => {
  it("lets a channel's replies go to this host's own addresses only when set", async (context) => {
    needSandboxes(context, t);
    const callbackUrl = `http://127.0.0.1:${hooks.port}/loopback`;
    const refused = await t.call("POST", `/v1/agents/${agentId}/channels/webhook`, { callbackUrl });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /127\.0\.0\.1 is this host's own.*agents\.allowPrivateCallbacks/,
    );
    const open = await startSandboxServer({
      agents: { allowPrivateCallbacks: true },
      egress: { hosts: { "model.test.internal": new URL(model.baseURL).host } },
    });
    needSandboxes(context, open);
    try {
      const id = await readyAgent(open);
      const response = await open.call("POST", `/v1/agents/${id}/channels/webhook`, {
        callbackUrl,
      });
      const { url, secret } = (await response.json()) as { url: string; secret: string };
      expect(response.status).toBe(201);
      expect((await postWebhook(url, secret, { id: "l-1", text: "loop" })).status).toBe(202);
      const reply = await hooks.next();
      expect(reply.path).toBe("/loopback");
      expect(JSON.parse(reply.body)).toMatchObject({ text: "echo: loop", inReplyTo: "l-1" });
    } finally {
      await open.stop();
    }
  }, 120_000);
});
