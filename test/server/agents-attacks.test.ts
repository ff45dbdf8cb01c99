// Managed agents attacked as a hostile tenant, a hostile internet and a hostile process inside an
// agent's own sandbox, against a real service with real sandboxes, a local OpenAI-compatible
// model and a local npm registry: another project's key and an agent's tokens reach nothing
// beyond their grant; the agent's sandbox, handled as any of the project's sandboxes, does not
// leave the agent broken; bad input is a 4xx naming the problem with nothing stored; and lines a
// sandboxed process writes as the agent core (forged protocol events, long lines) neither break
// the project's records nor grow the service's memory.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../src/core/wire/agents.js";
import { AgentLogs } from "../../src/server/agents/logs.js";
import { type FakeRequest, type FakeScriptStep, startFakeOpenAI } from "../helpers/fake-openai.js";
import { connection, needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import { agentLog, createAgent, getAgent, waitForAgent, waitUntilReady } from "./agents-helpers.js";
import { sendMessage } from "./agents-turns-helpers.js";
import { addProject, type TestServer } from "./helpers.js";
import { type NpmRegistryStub, startNpmRegistryStub } from "./npm-registry-stub.js";

const modelKey = "sk-agent-model-key-attacks-0c9d8e7f6a5b";
const otherKey = "second-project-key-attacks-0123456789";

// A package whose tool runs /workspace/forge.mjs inside the core, with the core's own stdout
// writer and the turn it runs: what any process of the sandbox can make the core do, since the
// workspace (and the package in it) is the sandbox's to write.
const forgePackage = `
let turnId;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const found = /"turnId":"([^"]+)"/.exec(String(chunk));
  if (found) turnId = found[1];
  return write(chunk, ...rest);
};
export const tools = [{
  name: "forge",
  description: "Runs /workspace/forge.mjs in the agent core.",
  parameters: { type: "object", properties: {} },
  async execute() {
    const script = await import("/workspace/forge.mjs?" + Date.now());
    return await script.default({ write: (line) => write(line + "\\n"), turnId: () => turnId });
  },
}];
`;

let t: TestServer | undefined;
let registry: NpmRegistryStub;
const steps: FakeScriptStep[] = [];
const model = { baseURL: "http://model.test/v1", model: "gpt-4o-mini", apiKey: "models/MODEL_KEY" };

beforeAll(async () => {
  const fake = await startFakeOpenAI(
    Array.from({ length: 500 }, () => (request: FakeRequest) => {
      const step = steps.shift() ?? { text: "hello" };
      return typeof step === "function" ? step(request) : step;
    }),
  );
  registry = await startNpmRegistryStub([
    {
      name: "cairn-forge",
      version: "1.0.0",
      manifest: { type: "module", main: "index.js" },
      files: { "index.js": forgePackage },
    },
  ]);
  t = await startSandboxServer({
    agents: { registry: registry.urlFor("registry.test") },
    egress: {
      hosts: {
        "model.test": new URL(fake.baseURL).host,
        "registry.test": `127.0.0.1:${registry.port}`,
      },
    },
  });
  afterAll(async () => {
    await t?.stop();
    await fake.close();
    await registry.close();
  });
  if (t !== undefined) {
    await t.call("POST", "/api/secret-stores", { name: "models", allowlist: ["model.test"] });
    await t.call("PUT", "/api/secret-stores/models/secrets/MODEL_KEY", { value: modelKey });
    await addProject(t, "other", otherKey);
  }
});

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** The whole of what the API shows of an agent: its record, conversations and channels. */
async function snapshot(server: TestServer, agentId: string): Promise<string> {
  const record = await json<AgentRecord>(await server.call("GET", `/v1/agents/${agentId}`));
  const { conversations } = await json<{ conversations: { id: string }[] }>(
    await server.call("GET", `/v1/agents/${agentId}/conversations`),
  );
  const full = await Promise.all(
    conversations.map(async ({ id }) =>
      json(await server.call("GET", `/v1/agents/${agentId}/conversations/${id}`)),
    ),
  );
  const channels = await json(await server.call("GET", `/v1/agents/${agentId}/channels`));
  return JSON.stringify({ record, full, channels });
}

/** The names of the project's agents. */
async function agentNames(server: TestServer): Promise<string[]> {
  const { agents } = await json<{ agents: AgentRecord[] }>(await server.call("GET", "/v1/agents"));
  return agents.map((agent) => agent.name);
}

/** Runs a shell command in a sandbox as the project can (the API's exec). */
async function inSandbox(server: TestServer, sandboxId: string, command: string) {
  const sandbox = await Sandbox.connect(sandboxId, connection(server));
  return sandbox.run(["sh", "-c", command]);
}

/** An agent, ready, with a conversation the API key started (answered "hello"). */
async function readyAgent(server: TestServer, name: string, packages: string[] = []) {
  const created = await createAgent(server, { name, model, packages });
  const agent = await waitUntilReady(server, created.id);
  const reply = await sendMessage(server, agent.id, { content: "hi" });
  await reply.end();
  const conversationId = reply.response.headers.get("x-cairn-conversation-id") as string;
  return { agent, conversationId };
}

/** Makes the forge tool run `script` (the body of an async function of `{write, turnId}`). */
async function forge(server: TestServer, sandboxId: string, script: string) {
  const sandbox = await Sandbox.connect(sandboxId, connection(server));
  await sandbox.files.write(
    "/workspace/forge.mjs",
    `export default async function ({ write, turnId }) {\n${script}\n}\n`,
  );
  // What an earlier turn that crashed left unasked goes: this turn calls the tool first.
  steps.length = 0;
  steps.push({ toolCalls: [{ id: `call_${Date.now()}`, name: "forge", arguments: "{}" }] });
  steps.push({ text: "forged" });
}

describe("another project's key", () => {
  it("finds none of an agent's routes (404 each) and changes nothing", async (context) => {
    needSandboxes(context, t);
    const { agent, conversationId } = await readyAgent(t, "isolated");
    const web = await json<{ channel: { id: string } }>(
      await t.call("POST", `/v1/agents/${agent.id}/channels/web`, {}),
    );
    const before = await snapshot(t, agent.id);
    const other = { "x-api-key": otherKey };
    const base = `/v1/agents/${agent.id}`;
    const requests: Array<[string, string, unknown?]> = [
      ["GET", base],
      ["PATCH", base, { instructions: "Answer in pirate." }],
      ["POST", `${base}/stop`],
      ["POST", `${base}/start`],
      ["GET", `${base}/logs`],
      ["GET", `${base}/logs?follow=1`],
      ["POST", `${base}/messages`, { content: "hi" }],
      ["POST", `${base}/messages`, { content: "hi", conversationId }],
      ["GET", `${base}/conversations`],
      ["GET", `${base}/conversations/${conversationId}`],
      ["POST", `${base}/conversations/${conversationId}/stop`],
      ["GET", `${base}/channels`],
      ["POST", `${base}/channels/web`, {}],
      ["POST", `${base}/channels/webhook`, { callbackUrl: "https://example.com/hook" }],
      ["DELETE", `${base}/channels/${web.channel.id}`],
      ["GET", `/api/sandboxes/${agent.sandboxId}`],
      ["POST", `/api/sandboxes/${agent.sandboxId}/exec`, { cmd: "true" }],
      ["PATCH", `/api/sandboxes/${agent.sandboxId}`, { timeout: 1 }],
      ["POST", `/api/sandboxes/${agent.sandboxId}/tokens`, { scopes: ["exec"] }],
      ["DELETE", `/api/sandboxes/${agent.sandboxId}`],
      ["DELETE", base],
    ];
    for (const [method, path, body] of requests) {
      const response = await t.call(method, path, body, other);
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect(
      (await json<{ agents: unknown[] }>(await t.call("GET", "/v1/agents", undefined, other)))
        .agents,
    ).toEqual([]);
    expect(await snapshot(t, agent.id)).toBe(before);
    expect((await getAgent(t, agent.id)).state).toBe("ready");
  });
});

describe("an agent's tokens", () => {
  it("a sandbox token of the agent's own sandbox reaches no agent route", async (context) => {
    needSandboxes(context, t);
    const { agent, conversationId } = await readyAgent(t, "token-sandbox");
    const minted = await json<{ token: string }>(
      await t.call("POST", `/api/sandboxes/${agent.sandboxId}/tokens`, {
        scopes: ["read", "write", "exec"],
      }),
    );
    const before = await snapshot(t, agent.id);
    const base = `/v1/agents/${agent.id}`;
    for (const [method, path, body] of [
      ["GET", "/v1/agents"],
      ["GET", base],
      ["PATCH", base, { instructions: "x" }],
      ["POST", `${base}/stop`],
      ["GET", `${base}/logs`],
      ["POST", `${base}/messages`, { content: "hi" }],
      ["GET", `${base}/conversations/${conversationId}`],
      ["POST", `${base}/channels/web`, {}],
      ["DELETE", base],
    ] as Array<[string, string, unknown?]>) {
      for (const header of [
        { authorization: `Bearer ${minted.token}` },
        { "x-api-key": minted.token },
      ]) {
        const response = await fetch(`${t.server.url}${path}`, {
          method,
          headers: { ...header, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status, `${method} ${path}`).toBe(403);
      }
    }
    expect(await snapshot(t, agent.id)).toBe(before);
  });

  it("a web token reaches neither the agent's sandbox nor anything under /api", async (context) => {
    needSandboxes(context, t);
    const { agent } = await readyAgent(t, "token-web");
    const { token } = await json<{ token: string }>(
      await t.call("POST", `/v1/agents/${agent.id}/channels/web`, {}),
    );
    const sandbox = `/api/sandboxes/${agent.sandboxId}`;
    for (const [method, path, body] of [
      ["GET", sandbox],
      ["GET", `${sandbox}/files?path=/workspace`],
      ["PUT", `${sandbox}/files?path=/workspace/x`, "x"],
      ["POST", `${sandbox}/exec`, { cmd: "id" }],
      ["GET", `${sandbox}/exec`],
      ["POST", `${sandbox}/tokens`, { scopes: ["exec"] }],
      ["GET", "/api/sandboxes"],
      ["GET", "/api/secret-stores"],
      ["GET", "/v1/agents"],
      ["GET", `/v1/agents/${agent.id}`],
      ["GET", `/v1/agents/${agent.id}/logs`],
      ["GET", `/v1/agents/${agent.id}//logs`],
      ["GET", `/v1/agents/${agent.id}/%6cogs`],
      ["GET", `/v1/agents/${agent.id}/conversations%2f..%2flogs`],
    ] as Array<[string, string, unknown?]>) {
      const response = await fetch(`${t.server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    // Nor through the exec WebSocket's ?token=, which only sandbox tokens use.
    const upgrade = await fetch(`${t.server.url}${sandbox}/exec?token=${token}`);
    expect(upgrade.status).toBe(401);
  });
});

describe("the agent's sandbox, handled as any sandbox of the project", () => {
  it("deleted under the agent, or timed out, it is replaced and the agent is ready again with its workspace", async (context) => {
    needSandboxes(context, t);
    const { agent } = await readyAgent(t, "replaced");
    const first = agent.sandboxId as string;
    expect((await inSandbox(t, first, "echo kept > /workspace/note.txt")).exitCode).toBe(0);

    expect((await t.call("DELETE", `/api/sandboxes/${first}`)).status).toBe(200);
    const second = await waitForAgent(
      t,
      agent.id,
      (each) => each.state === "ready" && each.sandboxId !== first,
    );
    expect(second.restarts).toBe(1);
    expect(second.lastError).toMatch(/its sandbox stopped/);
    expect((await inSandbox(t, second.sandboxId as string, "cat /workspace/note.txt")).stdout).toBe(
      "kept\n",
    );

    const cut = await t.call("PATCH", `/api/sandboxes/${second.sandboxId}`, { timeout: 1 });
    expect(cut.status).toBe(200);
    const third = await waitForAgent(
      t,
      agent.id,
      (each) => each.state === "ready" && each.sandboxId !== second.sandboxId,
    );
    expect(third.restarts).toBe(2);
    const reply = await sendMessage(t, agent.id, { content: "still there?" });
    await reply.end();
    expect(reply.parts.at(-1)?.type).toBe("finish");
  });
});

describe("bad input", () => {
  it("refuses a package spec that npm would read as a path, a file, a URL, git or an alias", async (context) => {
    needSandboxes(context, t);
    const before = await agentNames(t);
    // Ranges and tags npm takes from the registry stay allowed.
    const allowed = ["x@1.2.3", "x@^1.0.0", "x@>=1 <2", "x@1.x || 2.x", "x@latest", "@scope/x@~1"];
    const refused = [
      "x@.",
      "x@..",
      "x@./lib",
      "x@.hidden",
      "x@a.tgz",
      "x@a.tar",
      "x@a.tar.gz",
      "x@A.TGZ",
      "--registry=http://evil.test/",
      "x@--registry=http://evil.test/",
      "file:../x",
      "x@file:../x",
      "git+https://github.com/a/b",
      "x@github:a/b",
      "x@a/b",
      "../x",
      "@scope/../x",
      "x@npm:evil",
      "https://evil.test/x.tgz",
    ];
    for (const spec of [...refused, ...allowed]) {
      const response = await t.call("POST", "/v1/agents", {
        name: "packaged",
        model,
        packages: [spec],
      });
      const body = await json<{ id: string; error: string; message: string }>(response);
      if (allowed.includes(spec)) {
        expect(response.status, spec).toBe(201);
        expect((await t.call("DELETE", `/v1/agents/${body.id}`)).status).toBe(204);
        continue;
      }
      expect(response.status, spec).toBe(400);
      expect(body.error, spec).toBe("invalid_request");
      expect(body.message, spec).toContain(JSON.stringify(spec));
    }
    expect(await agentNames(t)).toEqual(before);
  });

  it("refuses a model baseURL with credentials, another scheme, or a link-local or metadata address", async (context) => {
    needSandboxes(context, t);
    // Without a secret store: its sandbox is opened to the model's host, whatever that is.
    const created = await createAgent(t, {
      name: "rebased",
      model: { baseURL: "http://model.test/v1", model: "gpt-4o-mini" },
    });
    const agent = await waitUntilReady(t, created.id);
    const before = await snapshot(t, agent.id);
    for (const [baseURL, named] of [
      ["http://user:pass@model.test/v1", "credentials"],
      ["file:///etc/passwd", "http"],
      ["javascript:alert(1)", "http"],
      ["ftp://model.test/v1", "http"],
      ["http://169.254.169.254/latest", "169.254.169.254"],
      ["http://2852039166/v1", "169.254.169.254"],
      ["http://0xa9fea9fe/v1", "169.254.169.254"],
      ["http://[::ffff:169.254.169.254]/v1", "link-local"],
      ["http://[fd00:ec2::254]/v1", "metadata"],
      ["http://[fe80::1]/v1", "link-local"],
      ["http://169.254.1.1:8080/v1", "link-local"],
      [`http://model.test/${"a".repeat(2100)}`, "2048"],
    ]) {
      const created = await t.call("POST", "/v1/agents", {
        name: "rebased-2",
        model: { ...model, baseURL },
      });
      const patched = await t.call("PATCH", `/v1/agents/${agent.id}`, {
        model: { ...model, baseURL },
      });
      for (const response of [created, patched]) {
        expect(response.status, baseURL).toBe(400);
        const body = await json<{ message: string }>(response);
        expect(body.message, baseURL).toContain("model.baseURL");
        expect(body.message, baseURL).toContain(named);
      }
    }
    expect(await snapshot(t, agent.id)).toBe(before);
    expect((await t.call("GET", "/v1/agents")).status).toBe(200);
  });

  it("answers every malformed body, id and query with a 4xx naming the problem, never a 500", async (context) => {
    needSandboxes(context, t);
    const { agent, conversationId } = await readyAgent(t, "malformed");
    const before = await snapshot(t, agent.id);
    const namesBefore = await agentNames(t);
    const base = `/v1/agents/${agent.id}`;
    const raw: Array<[string, string]> = [
      ["not JSON", "{"],
      ["an array", "[]"],
      ["null", "null"],
      ["a string", '"x"'],
      ["prototype keys", '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}'],
      ["deep nesting", `${"[".repeat(100_000)}${"]".repeat(100_000)}`],
      ["a lone surrogate", '{"name":"\\ud800","content":"\\ud800"}'],
      ["a NUL", '{"name":"a\\u0000b","content":"x","instructions":"\\u0000"}'],
    ];
    const routes: Array<[string, string]> = [
      ["POST", "/v1/agents"],
      ["PATCH", base],
      ["POST", `${base}/messages`],
      ["POST", `${base}/channels/web`],
      ["POST", `${base}/channels/webhook`],
      ["POST", `${base}/channels/slack`],
    ];
    const refused = async (label: string, response: Response) => {
      expect(response.status, label).toBeGreaterThanOrEqual(400);
      expect(response.status, label).toBeLessThan(500);
      const text = await response.text();
      const body = JSON.parse(text) as { error: string; message: string };
      expect(body.error, label).toMatch(/^[a-z_]+$/);
      expect(body.message.length, label).toBeGreaterThan(10);
      expect(text, label).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
    };
    for (const [method, path] of routes) {
      for (const [label, body] of raw) {
        // The web channel takes an empty body; a deep array or a NUL is still a wrong one.
        await refused(`${method} ${path} ${label}`, await t.call(method, path, body));
      }
      await refused(
        `${method} ${path} text/plain`,
        await t.call(method, path, "{}", { "content-type": "text/plain" }),
      );
      await refused(
        `${method} ${path} over the body limit`,
        await t.call(method, path, `{"content":"${"a".repeat(11 * 1024 * 1024)}"}`),
      );
    }
    for (const [label, body] of [
      ["32 KiB + 1", { content: "a".repeat(32 * 1024 + 1) }],
      ["32 KiB + 1 in two-byte characters", { content: `${"é".repeat(16 * 1024)}a` }],
      ["empty", { content: "" }],
      ["content of another type", { content: { text: "hi" } }],
      ["another role", { content: "x", role: "system" }],
      ["a conversation of no form", { content: "x", conversationId: "../conv" }],
      ["a conversation of none", { content: "x", conversationId: `conv_${"0".repeat(24)}` }],
      [
        "a file: attachment",
        {
          content: "x",
          attachments: [{ name: "a", mediaType: "text/plain", url: "file:///etc/passwd" }],
        },
      ],
      [
        "a javascript: attachment",
        {
          content: "x",
          attachments: [{ name: "a", mediaType: "text/html", url: "javascript:alert(1)" }],
        },
      ],
      [
        "an attachment with a header in its type",
        {
          content: "x",
          attachments: [{ name: "a", mediaType: "text/plain\r\nx: y", url: "https://x.test/" }],
        },
      ],
      [
        "11 attachments",
        {
          content: "x",
          attachments: Array.from({ length: 11 }, () => ({
            name: "a",
            mediaType: "text/plain",
            url: "https://x.test/",
          })),
        },
      ],
    ] as Array<[string, unknown]>) {
      await refused(`message ${label}`, await t.call("POST", `${base}/messages`, body));
    }
    for (const id of [
      "..",
      "agt_",
      `AGT_${"0".repeat(24)}`,
      `agt_${"0".repeat(24)}`,
      "%00",
      "%ff",
      "__proto__",
      "x".repeat(5000),
    ]) {
      for (const [method, suffix] of [
        ["GET", ""],
        ["PATCH", ""],
        ["DELETE", ""],
        ["POST", "/stop"],
        ["POST", "/start"],
        ["GET", "/logs"],
        ["POST", "/messages"],
        ["GET", "/conversations"],
        ["GET", `/conversations/${conversationId}`],
        ["GET", "/channels"],
        ["POST", "/channels/web"],
      ] as const) {
        const body = method === "GET" || method === "DELETE" ? undefined : { content: "x" };
        await refused(
          `${method} ${id}${suffix}`,
          await t.call(method, `/v1/agents/${id}${suffix}`, body),
        );
      }
    }
    for (const query of [
      "logs?tail=-1",
      "logs?tail=1e9",
      "logs?follow=2",
      "logs?x=1",
      "conversations?limit=0",
      "conversations?limit=abc",
      "conversations?__proto__=1",
    ]) {
      await refused(query, await t.call("GET", `${base}/${query}`));
    }
    for (const cid of ["..%2f..", "conv_x", `conv_${"0".repeat(24)}`, "__proto__"]) {
      await refused(`conversation ${cid}`, await t.call("GET", `${base}/conversations/${cid}`));
      await refused(`stop ${cid}`, await t.call("POST", `${base}/conversations/${cid}/stop`));
    }
    for (const type of ["email", "__proto__", "constructor", "toString"]) {
      await refused(`channel ${type}`, await t.call("POST", `${base}/channels/${type}`, {}));
    }
    expect(await snapshot(t, agent.id)).toBe(before);
    expect(await agentNames(t)).toEqual(namesBefore);
  });
});

describe("a hostile process in the agent's sandbox", () => {
  let forger: { id: string; sandboxId: string } | undefined;
  const forgerAgent = async (server: TestServer) => {
    if (forger === undefined) {
      const { agent } = await readyAgent(server, "forger", ["cairn-forge@1.0.0"]);
      forger = { id: agent.id, sandboxId: agent.sandboxId as string };
    }
    const agent = await waitUntilReady(server, forger.id);
    forger.sandboxId = agent.sandboxId as string;
    return forger;
  };

  it("finds only the key's placeholder in the core's configuration, and cannot write the core", async (context) => {
    needSandboxes(context, t);
    const { sandboxId } = await forgerAgent(t);
    const environ = await inSandbox(
      t,
      sandboxId,
      'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline | grep -q agent-core.mjs; then tr "\\0" "\\n" < $p/environ; fi; done',
    );
    expect(environ.stdout).toMatch(/^CAIRN_AGENT_CONFIG=.*"apiKeyEnv":"CAIRN_SECRET_MODEL_KEY"/m);
    expect(environ.stdout).toMatch(/^CAIRN_SECRET_MODEL_KEY=cairn_sealed_/m);
    expect(environ.stdout).not.toContain(modelKey);
    const write = await inSandbox(
      t,
      sandboxId,
      "touch /opt/cairn/x || echo refused; echo >> /opt/cairn/agent-core.mjs || echo refused",
    );
    expect(write.stdout).toBe("refused\nrefused\n");
  });

  it("cannot break the project's agent records with forged ready lines", async (context) => {
    needSandboxes(context, t);
    const { id, sandboxId } = await forgerAgent(t);
    const before = await getAgent(t, id);
    await forge(
      t,
      sandboxId,
      `for (const tools of ["x", [null], [{ name: 5 }], [{ name: "admin", description: "forged", parameters: {} }]]) {
        write(JSON.stringify({ type: "ready", tools }));
      }
      return "forged";`,
    );
    const reply = await sendMessage(t, id, { content: "forge" });
    await reply.end();
    expect(reply.parts.at(-1)?.type).toBe("finish");
    const list = await t.call("GET", "/v1/agents");
    expect(list.status).toBe(200);
    const after = await getAgent(t, id);
    expect(after.tools).toEqual(before.tools);
    expect(after.state).toBe("ready");
  });

  it("forged turn events that do not fit the protocol are not taken: the turn, its trace and the conversation go on", async (context) => {
    needSandboxes(context, t);
    const { id, sandboxId } = await forgerAgent(t);
    await forge(
      t,
      sandboxId,
      `const turn = turnId();
      const now = Date.now();
      const llm = { type: "llm", turnId: turn, startedAt: now, endedAt: now, model: "gpt-4o", finishReason: "stop",
        request: { messageCount: 1 }, response: { text: "", toolCalls: [] } };
      write(JSON.stringify({ ...llm, usage: { promptTokens: 1e300, completionTokens: -5 } }));
      write(JSON.stringify({ ...llm, usage: { promptTokens: 1.5, completionTokens: "9" } }));
      write(JSON.stringify({ ...llm, model: { name: "gpt-4o" }, usage: { promptTokens: 1, completionTokens: 1 } }));
      write(JSON.stringify({ type: "text-delta", turnId: turn, delta: { text: "x" } }));
      write(JSON.stringify({ type: "turn-error", turnId: turn, kind: "bogus", message: {} }));
      write(JSON.stringify({ type: "finish", turnId: turn, messages: "x", finishReason: "stop" }));
      write(JSON.stringify({ type: "finish", turnId: turn, messages: [{ role: "root", content: 1 }], finishReason: "stop" }));
      write("\\u0000\\uFFFF not JSON at all");
      return "forged";`,
    );
    const reply = await sendMessage(t, id, { content: "forge" });
    await reply.end();
    expect(reply.parts.map((part) => part.type)).not.toContain("error");
    expect(reply.parts.at(-1)?.type).toBe("finish");
    const text = reply.parts
      .filter((part) => part.type === "text-delta")
      .map((part) => part.delta)
      .join("");
    expect(text).toBe("forged");
    const { traceId, conversationId } = (
      reply.parts[0] as unknown as { messageMetadata: { traceId: string; conversationId: string } }
    ).messageMetadata;
    const trace = await json<{
      spans: Array<{ children: Array<{ kind: string; usage: unknown }> }>;
    }>(await t.call("GET", `/traces/${traceId}`));
    const llm = trace.spans[0]?.children.filter((span) => span.kind === "llm") ?? [];
    expect(llm.map((span) => span.usage)).toEqual([
      { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
      { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
    ]);
    // The next message of that conversation is answered: its history is what the core said.
    steps.push({ text: "again" });
    const next = await sendMessage(t, id, { content: "and now?", conversationId });
    await next.end();
    expect(next.parts.at(-1)?.type).toBe("finish");
    expect(await agentLog(t, id)).toContain("not JSON at all");
  });

  it("keeps its long lines out of the agent's record and log: lastError and log lines stay short", async (context) => {
    needSandboxes(context, t);
    const { id, sandboxId } = await forgerAgent(t);
    const { restarts } = await getAgent(t, id);
    await forge(
      t,
      sandboxId,
      `const long = "a".repeat(4 * 1024 * 1024);
      for (let i = 0; i < 3; i++) process.stderr.write(long + "\\n");
      write(long);
      await new Promise((resolve) => process.stderr.write("", resolve));
      process.exit(3);`,
    );
    const reply = await sendMessage(t, id, { content: "forge" });
    await reply.end();
    const crashed = await waitUntilReady(t, id, restarts + 1);
    expect(crashed.lastError).toMatch(/exit code 3/);
    expect((crashed.lastError ?? "").length).toBeLessThan(4096);
    const { lines } = await json<{ lines: { line: string }[] }>(
      await t.call("GET", `/v1/agents/${id}/logs?tail=2000`),
    );
    expect(Math.max(...lines.map(({ line }) => line.length))).toBeLessThan(9000);
    expect(
      (await t.call("GET", "/v1/agents").then((response) => response.text())).length,
    ).toBeLessThan(64 * 1024);

    // A fatal line with a long message, then an exit: the agent waits for a start, saying why in short.
    await forge(
      t,
      (await getAgent(t, id)).sandboxId as string,
      `write(JSON.stringify({ type: "fatal", message: "b".repeat(4 * 1024 * 1024) }));
      await new Promise((resolve) => process.stdout.write("", resolve));
      process.exit(1);`,
    );
    const fatal = await sendMessage(t, id, { content: "forge" });
    await fatal.end();
    const stopped = await waitForAgent(t, id, (agent) => agent.state === "crashed");
    expect((stopped.lastError ?? "").length).toBeLessThan(4096);
    expect((await t.call("POST", `/v1/agents/${id}/start`)).status).toBe(200);
    await waitUntilReady(t, id);
  });
});

describe("the agents' log", () => {
  it("keeps a cut line without the long line it was cut from", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const used = () => {
      gc();
      gc();
      const { external, heapUsed } = process.memoryUsage();
      return external + heapUsed;
    };
    const logs = new AgentLogs();
    // As the exec's line splitter makes them: each line a string of its own, decoded from bytes.
    const bytes = Buffer.alloc(4 * 1024 * 1024, "a");
    const before = used();
    for (let i = 0; i < 100; i++) {
      logs.add("agt_test", "stderr", Buffer.from(bytes).toString("utf8"));
    }
    // 100 lines of 4 MiB kept whole would be 400 MiB; cut, they are 100 × 8 KiB.
    expect(used() - before).toBeLessThan(64 * 1024 * 1024);
    expect(logs.lines("agt_test", 1)[0]?.line).toMatch(/^a{8192}… \(4186112 more characters\)$/);
  });
});
