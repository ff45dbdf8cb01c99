// Managed agents when several service instances share one PostgreSQL database (issue 16): an
// agent runs on the instance that created it, every instance lists it, and its requests (the
// API key's, a web token's, a message stream) and its channels' messages that reach another
// instance are forwarded there, where its tokens and channel secrets are checked; names stay
// unique per project across instances; an instance that vanishes leaves its agents crashed.
// Real instances, a real cluster, real agents in real sandboxes, a local model, webhook
// receiver and Slack API.

import type { ServerOptions } from "cairn-ai/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from "vitest";
import type { AgentRecord } from "../../src/core/wire/agents.js";
import { type FakeOpenAI, type FakeRequest, startFakeOpenAI } from "../helpers/fake-openai.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import {
  postSlackEvent,
  postWebhook,
  type Receiver,
  signWebhook,
  slackEventCallback,
  startFakeSlack,
  startReceiver,
  webhookSignatureHolds,
} from "../server/agent-channel-helpers.js";
import { createAgent, getAgent, waitForAgent, waitUntilReady } from "../server/agents-helpers.js";
import { type ReplyReader, sendMessage } from "../server/agents-turns-helpers.js";
import { addProject, startTestServer, type TestServer } from "../server/helpers.js";
import { testSandboxOptions, whySandboxesCannotRun } from "./helpers.js";
import { startInstanceProcess } from "./instance-process.js";

const clusterFor = postgresClusterPerFile();
const apiKey = "agents-instances-key-0123456789";
const otherKey = "agents-other-project-key-0123456789";
const masterKey = "c".repeat(64);
const modelKey = "sk-instances-model-key-0a1b2c3d4e5f6a7b";
const botToken = "xoxb-instances-bot-token-0123456789";
const signingSecret = "instances-slack-signing-secret";
/** Quick heartbeats, so that a vanished instance is found in about a second. */
const presence = { heartbeatMs: 100, staleAfterMs: 1500 };
const cleanups: Array<() => Promise<void> | void> = [];

let model: FakeOpenAI;
let hooks: Receiver;
let slack: Receiver;

/** The model answers "echo: " and the last user message. */
function echo(request: FakeRequest) {
  const { messages = [] } = request.body as {
    messages?: Array<{ role: string; content: unknown }>;
  };
  const last = messages.filter((message) => message.role === "user").at(-1);
  return { text: `echo: ${typeof last?.content === "string" ? last.content : "?"}` };
}

beforeAll(async () => {
  model = await startFakeOpenAI(Array.from({ length: 200 }, () => echo));
  hooks = await startReceiver();
  slack = await startFakeSlack(botToken);
});

afterAll(async () => {
  await model?.close();
  await hooks?.close();
  await slack?.close();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What every instance of a test is started with: sandboxes, the egress hosts, one master key. */
function commonOptions(database: string): ServerOptions {
  return {
    database,
    apiKey,
    masterKey,
    presence,
    sandboxes: testSandboxOptions,
    egress: {
      hosts: {
        "model.test.internal": new URL(model.baseURL).host,
        "hooks.test.internal": `127.0.0.1:${hooks.port}`,
        "slack.test.internal": `127.0.0.1:${slack.port}`,
      },
    },
  };
}

/** A database on the file's cluster, or the test skipped (no PostgreSQL, no sandboxes). */
async function sharedDatabase(context: TestContext): Promise<string> {
  const missing = await whySandboxesCannotRun();
  if (missing !== undefined) context.skip(missing);
  return await clusterFor(context).createDatabase();
}

async function instance(database: string): Promise<TestServer> {
  const t = await startTestServer(commonOptions(database));
  cleanups.push(() => t.stop());
  return t;
}

/** The secret stores of the model's key and the Slack bot token, shared by every instance. */
async function secretStores(t: TestServer): Promise<void> {
  for (const [name, host, key, value] of [
    ["models", "model.test.internal", "MODEL_KEY", modelKey],
    ["slack", "slack.test.internal", "BOT_TOKEN", botToken],
  ] as const) {
    expect((await t.call("POST", "/api/secret-stores", { name, allowlist: [host] })).status).toBe(
      201,
    );
    await t.call("PUT", `/api/secret-stores/${name}/secrets/${key}`, { value });
  }
}

function agentBody(name: string) {
  return {
    name,
    instructions: "Answer briefly.",
    model: {
      baseURL: "http://model.test.internal/v1",
      model: "gpt-4o-mini",
      apiKey: "models/MODEL_KEY",
    },
  };
}

/** The text of a reply read to its end. */
function textOf(reply: ReplyReader): string {
  return reply.parts
    .filter((part) => part.type === "text-delta")
    .map((part) => part.delta)
    .join("");
}

/** A channel attached through `t`, its URL moved to `to`'s address. */
async function attach(t: TestServer, agentId: string, type: string, body: unknown, to: TestServer) {
  const response = await t.call("POST", `/v1/agents/${agentId}/channels/${type}`, body);
  const answer = (await response.json()) as { url: string; secret?: string; token?: string };
  expect(response.status, JSON.stringify(answer)).toBe(201);
  const url = new URL(answer.url);
  return { ...answer, url: `${to.server.url}${url.pathname}` };
}

/** The API of an instance at `url` (one in a process of its own), with the project's key. */
function at(url: string): TestServer {
  return {
    server: { url } as TestServer["server"],
    apiKey,
    dataDir: "",
    database: undefined,
    call: (method, path, body) =>
      fetch(`${url}${path}`, {
        method,
        headers: {
          "x-api-key": apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    stop: async () => undefined,
  };
}

async function listed(t: TestServer, key = apiKey): Promise<AgentRecord[]> {
  const response = await fetch(`${t.server.url}/v1/agents`, { headers: { "x-api-key": key } });
  return ((await response.json()) as { agents: AgentRecord[] }).agents;
}

describe("an agent on one of two instances that share a PostgreSQL database", () => {
  it("is read, listed, messaged and stopped through the other, its channels and web token too", async (context) => {
    const database = await sharedDatabase(context);
    const a = await instance(database);
    const b = await instance(database);
    await secretStores(a);
    const created = await createAgent(a, agentBody("helper"));
    // Through B: the record is A's (forwarded), the list is the directory's.
    const ready = await waitUntilReady(b, created.id);
    expect(ready).toMatchObject({ id: created.id, name: "helper", state: "ready" });
    const inList = await waitForAgent(b, created.id, () => true);
    expect(inList.state).toBe("ready");
    expect((await listed(b)).map((each) => [each.id, each.state])).toEqual([[created.id, "ready"]]);

    // A message through B: the reply streams back from A's agent.
    const reply = await sendMessage(b, created.id, { content: "hello from B" });
    await reply.end();
    expect(reply.response.status).toBe(200);
    expect(textOf(reply)).toBe("echo: hello from B");
    const conversationId = reply.response.headers.get("x-cairn-conversation-id");
    const conversations = await a.call("GET", `/v1/agents/${created.id}/conversations`);
    expect(JSON.stringify(await conversations.json())).toContain(String(conversationId));

    // A web token made through A, used through B: A checks it and its reach.
    const web = await attach(a, created.id, "web", {}, b);
    const byToken = await sendMessage(
      b,
      created.id,
      { content: "from the page" },
      undefined,
      web.token,
    );
    await byToken.end();
    expect(byToken.response.status).toBe(200);
    expect(textOf(byToken)).toBe("echo: from the page");
    const beyondReach = await fetch(`${b.server.url}/v1/agents/${created.id}`, {
      headers: { authorization: `Bearer ${web.token}` },
    });
    expect(beyondReach.status).toBe(403);

    // A webhook channel's message sent to B reaches A's agent; A checks the signature.
    const webhook = await attach(
      a,
      created.id,
      "webhook",
      { callbackUrl: "http://hooks.test.internal/replies" },
      b,
    );
    const secret = String(webhook.secret);
    const accepted = await postWebhook(webhook.url, secret, { id: "w-1", text: "via B" });
    expect(accepted.status).toBe(202);
    const hooked = await hooks.next();
    expect(
      webhookSignatureHolds(secret, String(hooked.headers["cairn-signature"]), hooked.body),
    ).toBe(true);
    expect(JSON.parse(hooked.body)).toMatchObject({ text: "echo: via B", inReplyTo: "w-1" });
    expect((await postWebhook(webhook.url, "whsec_guess", { id: "w-2", text: "x" })).status).toBe(
      401,
    );
    expect((await postWebhook(webhook.url, secret, { id: "w-1", text: "replayed" })).status).toBe(
      401,
    );
    // Rightly signed, but claiming to come from another instance: B serves it itself, and B
    // has no such channel; the agent is not reached (its next reply is the Slack one below).
    const forgedBody = JSON.stringify({ id: "w-3", text: "forged" });
    const forgedHook = await fetch(webhook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "cairn-signature": signWebhook(secret, forgedBody),
        "x-cairn-forwarded-by": "instance",
      },
      body: forgedBody,
    });
    expect(forgedHook.status).toBe(401);

    // A Slack channel's event sent to B: verified by A, answered in its thread.
    const slackChannel = await attach(
      a,
      created.id,
      "slack",
      { botToken: "slack/BOT_TOKEN", signingSecret, apiBaseUrl: "http://slack.test.internal/api" },
      b,
    );
    const event = slackEventCallback({
      type: "app_mention",
      user: "U1",
      text: "<@UBOT> through B?",
      ts: "1700000100.000200",
      channel: "C42",
    });
    expect((await postSlackEvent(slackChannel.url, signingSecret, event)).status).toBe(200);
    expect(JSON.parse((await slack.next()).body)).toMatchObject({
      channel: "C42",
      text: "echo: through B?",
    });
    expect(hooks.received.map((each) => JSON.parse(each.body).text)).toEqual(["echo: via B"]);
    expect((await postSlackEvent(slackChannel.url, "wrong-secret", event)).status).toBe(401);

    // Stopped through B: A stops it, and both say so at once.
    const stopped = await b.call("POST", `/v1/agents/${created.id}/stop`);
    expect(((await stopped.json()) as AgentRecord).state).toBe("stopped");
    expect((await getAgent(a, created.id)).state).toBe("stopped");
    expect((await listed(b)).map((each) => each.state)).toEqual(["stopped"]);
    const refused = await b.call("POST", `/v1/agents/${created.id}/messages`, { content: "hi" });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "agent_not_ready" });
  }, 240_000);

  it("keeps names unique per project across instances, and other projects and forged forwards out", async (context) => {
    const database = await sharedDatabase(context);
    const a = await instance(database);
    const b = await instance(database);
    await secretStores(a);
    // The same name through A and B at once: one is made, the other is told it exists.
    const both = await Promise.all(
      [a, b].map((t) => t.call("POST", "/v1/agents", agentBody("twin"))),
    );
    const statuses = both.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 409]);
    const conflict = both.find((response) => response.status === 409) as Response;
    expect(await conflict.json()).toMatchObject({ error: "conflict" });
    const made = (await (both.find((response) => response.status === 201) as Response).json()) as {
      id: string;
    };
    expect((await listed(a)).map((each) => each.name)).toEqual(["twin"]);
    expect((await listed(b)).map((each) => each.name)).toEqual(["twin"]);
    // Deleted through the other instance, the name is free again at once on both.
    const [owner, notOwner] = both[0]?.status === 201 ? [a, b] : [b, a];
    expect((await notOwner.call("DELETE", `/v1/agents/${made.id}`)).status).toBe(204);
    expect(await listed(owner)).toEqual([]);
    const again = await createAgent(owner, agentBody("twin"));
    const agentPath = `/v1/agents/${again.id}`;

    // Another project's key through either instance: as if there were no such agent.
    await addProject(b, "other", otherKey);
    for (const t of [a, b]) {
      const asOther = (path: string, method = "GET", headers: Record<string, string> = {}) =>
        fetch(`${t.server.url}${agentPath}${path}`, {
          method,
          headers: { "x-api-key": otherKey, "content-type": "application/json", ...headers },
          ...(method === "POST" ? { body: JSON.stringify({ content: "hi" }) } : {}),
        });
      const read = await asOther("");
      expect(read.status).toBe(404);
      expect(await read.text()).not.toContain("twin");
      expect((await asOther("/messages", "POST")).status).toBe(404);
      expect((await asOther("/stop", "POST")).status).toBe(404);
      // A request that claims to come from another instance is served where it lands, with
      // that instance's checks: still no such agent for this project.
      expect((await asOther("", "GET", { "x-cairn-forwarded-by": "instance" })).status).toBe(404);
      expect(await listed(t, otherKey)).toEqual([]);
      // No key at all: refused wherever the agent is.
      expect((await fetch(`${t.server.url}${agentPath}`)).status).toBe(401);
    }
    // The right key with a forged forward, at the instance that does not run the agent: it
    // reads the record from the directory, but runs nothing for it (it is not here).
    const runsElsewhere = (await (await owner.call("GET", agentPath)).json()) as AgentRecord;
    const forged = await fetch(`${notOwner.server.url}${agentPath}/stop`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "x-cairn-forwarded-by": "instance" },
    });
    expect(forged.status).toBe(503);
    expect(await forged.json()).toMatchObject({ reason: "runner_unavailable" });
    expect((await getAgent(owner, again.id)).state).not.toBe("stopped");
    expect(runsElsewhere.name).toBe("twin");
    // A web token forged into a forwarded request is not the other instance's to honour.
    const web = await attach(owner, again.id, "web", {}, notOwner);
    const tokenForged = await fetch(`${notOwner.server.url}${agentPath}/conversations`, {
      headers: { authorization: `Bearer ${web.token}`, "x-cairn-forwarded-by": "instance" },
    });
    expect(tokenForged.status).toBe(401);
    const tokenForwarded = await fetch(`${notOwner.server.url}${agentPath}/conversations`, {
      headers: { authorization: `Bearer ${web.token}` },
    });
    expect(tokenForwarded.status).toBe(200);
  }, 240_000);
});

describe("an instance that vanishes", () => {
  it("leaves its agents crashed, and messages to them refused with 409", async (context) => {
    const database = await sharedDatabase(context);
    const b = await instance(database);
    await secretStores(b);
    const other = await startInstanceProcess(commonOptions(database));
    cleanups.push(() => other.remove());
    const c = at(other.url);
    const created = await createAgent(c, agentBody("doomed"));
    await waitUntilReady(b, created.id);

    await other.kill();
    // Until the others find it gone: 503 with Retry-After, never a hang or a 500.
    const answers = new Set<number>();
    let crashed: AgentRecord | undefined;
    while (crashed === undefined) {
      const answer = await b.call("GET", `/v1/agents/${created.id}`);
      answers.add(answer.status);
      if (answer.status === 503) {
        expect(answer.headers.get("retry-after")).toBe("5");
        expect(await answer.json()).toMatchObject({ reason: "runner_unavailable" });
      } else {
        const record = (await answer.json()) as AgentRecord;
        if (record.state === "crashed") crashed = record;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect([...answers].filter((status) => status !== 503 && status !== 200)).toEqual([]);
    expect(crashed.lastError).toMatch(/service instance is gone/);
    expect((await listed(b)).map((each) => [each.id, each.state])).toEqual([
      [created.id, "crashed"],
    ]);
    const message = await b.call("POST", `/v1/agents/${created.id}/messages`, { content: "hi" });
    expect(message.status).toBe(409);
    const refusal = (await message.json()) as { error: string; message: string };
    expect(refusal.error).toBe("agent_not_ready");
    expect(refusal.message).toMatch(/doomed is crashed \(its service instance is gone/);
    expect((await b.call("POST", `/v1/agents/${created.id}/stop`)).status).toBe(409);
    // Its name stays taken: the instance may start again with its data directory.
    expect((await b.call("POST", "/v1/agents", agentBody("doomed"))).status).toBe(409);
  }, 120_000);

  it("can have its agents deleted through another, which frees their names; back, it deletes them too", async (context) => {
    const database = await sharedDatabase(context);
    const b = await instance(database);
    await secretStores(b);
    let other = await startInstanceProcess(commonOptions(database));
    cleanups.push(() => other.remove());
    const created = await createAgent(at(other.url), agentBody("doomed"));
    await waitUntilReady(b, created.id);

    await other.kill();
    await crashedThrough(b, created.id);
    expect((await b.call("DELETE", `/v1/agents/${created.id}`)).status).toBe(204);
    expect((await b.call("GET", `/v1/agents/${created.id}`)).status).toBe(404);
    expect(await listed(b)).toEqual([]);
    // A second delete finds nothing, as on one instance.
    expect((await b.call("DELETE", `/v1/agents/${created.id}`)).status).toBe(404);
    const again = await createAgent(b, agentBody("doomed"));
    const ready = await waitUntilReady(b, again.id);

    // Started again on its data directory, it resumes the agent it ran, finds it deleted, and
    // stops and deletes it: no sandbox of it is left running, and no copy of it comes back.
    other = await other.restart();
    const c = at(other.url);
    const live = ["creating", "running", "stopping"];
    for (;;) {
      const { sandboxes } = (await (await c.call("GET", "/api/sandboxes")).json()) as {
        sandboxes: Array<{ id: string; status: string }>;
      };
      const running = sandboxes.filter((each) => live.includes(each.status));
      const local = await c.call("GET", `/v1/agents/${created.id}`);
      if (local.status === 404 && running.length === 1 && running[0]?.id === ready.sandboxId) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const through of [b, c]) {
      expect((await listed(through)).map((each) => [each.id, each.name])).toEqual([
        [again.id, "doomed"],
      ]);
      expect((await through.call("GET", `/v1/agents/${created.id}`)).status).toBe(404);
    }
  }, 180_000);
});

/** Waits until the agent reads as crashed through `t` (503 while its instance is not yet found gone). */
async function crashedThrough(t: TestServer, id: string): Promise<void> {
  for (;;) {
    const answer = await t.call("GET", `/v1/agents/${id}`);
    if (answer.status === 200 && ((await answer.json()) as AgentRecord).state === "crashed") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
