// The agent records of /v1/agents against a real service with real sandboxes: create, list,
// show, change and delete, and every refusal of the contract, each leaving the stored agents as
// they were.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleLogger, setLogger } from "../../src/core/logger.js";
import type { AgentRecord } from "../../src/core/wire/agents.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import {
  connection,
  needSandboxes,
  startSandboxServer,
  testSandboxOptions,
} from "../sandbox/helpers.js";
import { createAgent, getAgent, waitForAgent, waitUntilReady } from "./agents-helpers.js";
import { startTestServer, type TestServer } from "./helpers.js";

const keyValue = "sk-agent-model-key-5f1e9c2a77";

let model: FakeOpenAI;
let t: TestServer | undefined;
let modelURL: string;

beforeAll(async () => {
  model = await startFakeOpenAI([]);
  const port = new URL(model.baseURL).port;
  modelURL = `http://model.test:${port}/v1`;
  t = await startSandboxServer({
    egress: { hosts: { "model.test": `127.0.0.1:${port}`, "other.test": `127.0.0.1:${port}` } },
  });
  if (t !== undefined) {
    const store = await t.call("POST", "/api/secret-stores", {
      name: "models",
      allowlist: [`model.test:${port}`],
    });
    expect(store.status).toBe(201);
    const secret = await t.call("PUT", "/api/secret-stores/models/secrets/MODEL_KEY", {
      value: keyValue,
    });
    expect(secret.status).toBe(201);
    expect(
      (await t.call("POST", "/api/secret-stores", { name: "empty", allowlist: ["x.test"] })).status,
    ).toBe(201);
  }
});

afterAll(async () => {
  await t?.stop();
  await model?.close();
});

async function listAgents(server: TestServer): Promise<AgentRecord[]> {
  const response = await server.call("GET", "/v1/agents");
  expect(response.status).toBe(200);
  return ((await response.json()) as { agents: AgentRecord[] }).agents;
}

async function sandboxRecord(server: TestServer, id: string) {
  return (await (await server.call("GET", `/api/sandboxes/${id}`)).json()) as {
    status: string;
    tags: Record<string, string>;
  };
}

describe("agent records", () => {
  it("creates, lists, shows, changes and deletes an agent, with its sandbox", async (context) => {
    needSandboxes(context, t);
    const created = await createAgent(t, {
      name: "helper",
      model: { baseURL: modelURL, model: "small" },
      tags: { team: "ops" },
    });
    expect(created).toMatchObject({
      name: "helper",
      instructions: "",
      model: { baseURL: modelURL, model: "small" },
      packages: [],
      template: "base",
      cpuCount: 1,
      memoryMB: 1024,
      tags: { team: "ops" },
      state: "starting",
      restarts: 0,
      tools: [],
    });
    expect(created.id).toMatch(/^agt_[0-9a-f]{24}$/);
    expect(created.secretStore).toBeUndefined();
    expect(Date.parse(created.createdAt)).not.toBeNaN();

    const ready = await waitUntilReady(t, created.id);
    expect(ready.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["run_command", "read_file", "write_file", "list_files"]),
    );
    expect(ready.sandboxId).toMatch(/^sbx_/);
    const sandbox = await sandboxRecord(t, ready.sandboxId as string);
    expect(sandbox).toMatchObject({ status: "running", tags: { team: "ops", agent: "helper" } });
    expect((await listAgents(t)).map((agent) => agent.id)).toContain(created.id);

    // Tags: the record's and the running sandbox's (usage is attributed by them).
    const retagged = await t.call("PATCH", `/v1/agents/${created.id}`, { tags: { team: "web" } });
    expect(retagged.status).toBe(200);
    expect(((await retagged.json()) as AgentRecord).tags).toEqual({ team: "web" });
    expect((await sandboxRecord(t, ready.sandboxId as string)).tags).toEqual({
      team: "web",
      agent: "helper",
    });

    // New instructions start the process again in the same sandbox.
    const instructed = await t.call("PATCH", `/v1/agents/${created.id}`, {
      instructions: "Answer in French.",
    });
    expect(instructed.status).toBe(200);
    const again = await waitUntilReady(t, created.id);
    expect(again).toMatchObject({ instructions: "Answer in French.", restarts: 0 });
    expect(again.sandboxId).toBe(ready.sandboxId);

    // A new model starts it in a new sandbox: what it may reach changed.
    const remodelled = await t.call("PATCH", `/v1/agents/${created.id}`, {
      model: { baseURL: `http://other.test:${new URL(modelURL).port}/v1`, model: "large" },
    });
    expect(remodelled.status).toBe(200);
    const moved = await waitUntilReady(t, created.id);
    expect(moved.model.model).toBe("large");
    expect(moved.sandboxId).not.toBe(ready.sandboxId);
    expect((await sandboxRecord(t, ready.sandboxId as string)).status).toBe("stopped");

    // Deleted: its process, its sandbox and its kept workspace.
    const folder = join(t.dataDir, "agents", created.id);
    expect(existsSync(join(folder, "workspace"))).toBe(true);
    const deleted = await t.call("DELETE", `/v1/agents/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(existsSync(folder)).toBe(false);
    expect((await t.call("GET", `/v1/agents/${created.id}`)).status).toBe(404);
    expect((await listAgents(t)).map((agent) => agent.id)).not.toContain(created.id);
    expect((await sandboxRecord(t, moved.sandboxId as string)).status).toBe("stopped");
  });

  it("refuses each invalid create with a 400 naming the problem, storing nothing", async (context) => {
    needSandboxes(context, t);
    const before = await listAgents(t);
    const model = { baseURL: modelURL, model: "small" };
    const refused: Array<[unknown, RegExp]> = [
      [{ name: "Bad Name", model }, /name/],
      [{ name: "-x", model }, /name/],
      [{ name: "a".repeat(64), model }, /name/],
      [{ name: "ok", model, extra: 1 }, /extra/],
      [{ name: "ok", model: { ...model, temperature: 1 } }, /temperature/],
      [{ name: "ok" }, /model/],
      [{ name: "ok", model, instructions: "x".repeat(32_769) }, /32 KiB/],
      [{ name: "ok", model, instructions: "é".repeat(16_385) }, /32 KiB/],
      [{ name: "ok", model: { ...model, baseURL: "ftp://model.test/v1" } }, /http/],
      [{ name: "ok", model: { ...model, baseURL: "not a url" } }, /not a URL/],
      [{ name: "ok", model: { ...model, baseURL: "http://u:p@model.test/v1" } }, /credentials/],
      [{ name: "ok", model: { ...model, model: "" } }, /model.model/],
      // Loopback is the sandbox's own: the agent would call itself. The message says what works.
      [
        { name: "ok", model: { ...model, baseURL: "http://127.0.0.1:11434/v1" } },
        /model\.baseURL 127\.0\.0\.1:11434 is loopback.*the sandbox's 127\.0\.0\.1 is its own.*`cairn dev --egress-host models\.local=127\.0\.0\.1:11434` \(createServer\(\{ egress: \{ hosts: \{ "models\.local": "127\.0\.0\.1:11434" \} \} \}\)\) and use http:\/\/models\.local\/v1$/,
      ],
      [
        { name: "ok", model: { ...model, baseURL: "http://[::1]:8080/v1" } },
        /--egress-host models\.local=\[::1\]:8080`/,
      ],
      ...[
        "http://localhost:11434/v1",
        "http://LOCALHOST./v1",
        "https://models.localhost/v1",
        "http://127.1:8080/v1",
        "http://0x7f000001/v1",
        "http://127.200.0.9/v1",
        "http://0.0.0.0:11434/v1",
        "http://[::]:11434/v1",
        "http://[::ffff:127.0.0.1]:11434/v1",
        "http://[::ffff:7f00:1]/v1",
        "http://[::127.0.0.1]/v1",
        "http://[0:0:0:0:0:0:0:1]/v1",
      ].map((baseURL): [unknown, RegExp] => [
        { name: "ok", model: { ...model, baseURL } },
        /is loopback.*--egress-host models\.local=(127\.\d+\.\d+\.\d+|\[::1\]):\d+` .*models\.local/,
      ]),
      [{ name: "ok", model: { ...model, apiKey: "MODEL_KEY" } }, /<store>\/<KEY>/],
      [{ name: "ok", model: { ...model, apiKey: "models/lower" } }, /<store>\/<KEY>/],
      [
        { name: "ok", model, packages: ["https://evil.test/x.tgz"] },
        /not a package from the registry/,
      ],
      [{ name: "ok", model, packages: ["git+ssh://git@github.com/a/b"] }, /not a package/],
      [{ name: "ok", model, packages: ["github:a/b"] }, /not a package/],
      [{ name: "ok", model, packages: ["./local"] }, /not a package/],
      [{ name: "ok", model, packages: ["/abs/path"] }, /not a package/],
      [{ name: "ok", model, packages: ["x@file:../y"] }, /not a package/],
      [{ name: "ok", model, packages: ["x@npm:other"] }, /not a package/],
      [{ name: "ok", model, packages: ["--registry=http://evil.test"] }, /not a package/],
      [
        { name: "ok", model, packages: Array.from({ length: 21 }, (_, i) => `p${i}`) },
        /at most 20/,
      ],
      [{ name: "ok", model, template: "nope" }, /no template "nope".*base/],
      [{ name: "ok", model, cpuCount: 9 }, /cpuCount/],
      [{ name: "ok", model, memoryMB: 1000 }, /memory tier/],
      [{ name: "ok", model, tags: { "bad key!": "x" } }, /tags\.bad key!/],
      [{ name: "ok", model, secretStore: "Bad Store" }, /secretStore/],
      // The key's store and the agent's store must be one.
      [
        { name: "ok", model: { ...model, apiKey: "models/MODEL_KEY" }, secretStore: "empty" },
        /"models" but secretStore is "empty"/,
      ],
      // The store holds no such key.
      [{ name: "ok", model: { ...model, apiKey: "models/OTHER_KEY" } }, /has no key OTHER_KEY/],
      // The model's host is not on the store's allowlist: the agent could not reach it.
      [
        { name: "ok", model, secretStore: "empty" },
        /model's host model\.test:\d+ is not on the allowlist of the secret store "empty" \(x\.test\)/,
      ],
    ];
    for (const [body, message] of refused) {
      const response = await t.call("POST", "/v1/agents", body);
      const answer = (await response.json()) as { error: string; message: string };
      expect({ body, status: response.status, error: answer.error }).toEqual({
        body,
        status: 400,
        error: "invalid_request",
      });
      expect(answer.message).toMatch(message);
    }

    // A store that does not exist: 404 naming it, by the key's store or by secretStore.
    for (const body of [
      { name: "ok", model: { ...model, apiKey: "missing/MODEL_KEY" } },
      { name: "ok", model, secretStore: "missing" },
    ]) {
      const response = await t.call("POST", "/v1/agents", body);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        error: "not_found",
        message: expect.stringMatching(/no secret store "missing"/),
      });
    }

    const notJson = await t.call("POST", "/v1/agents", "{", { "content-type": "text/plain" });
    expect(notJson.status).toBe(415);
    const badJson = await t.call("POST", "/v1/agents", "{");
    expect(badJson.status).toBe(400);

    expect(await listAgents(t)).toEqual(before);
  });

  it("refuses a second agent of the same name with 409, keeping the first", async (context) => {
    needSandboxes(context, t);
    const first = await createAgent(t, {
      name: "twin",
      model: { baseURL: modelURL, model: "small" },
    });
    const second = await t.call("POST", "/v1/agents", {
      name: "twin",
      model: { baseURL: modelURL, model: "large" },
    });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({
      error: "conflict",
      message: expect.stringContaining('an agent named "twin"'),
    });
    expect((await listAgents(t)).filter((agent) => agent.name === "twin")).toHaveLength(1);
    expect((await getAgent(t, first.id)).model.model).toBe("small");
    expect((await t.call("DELETE", `/v1/agents/${first.id}`)).status).toBe(204);
  });

  it("refuses invalid changes and unknown agents, changing nothing", async (context) => {
    needSandboxes(context, t);
    const agent = await createAgent(t, {
      name: "steady",
      instructions: "Be brief.",
      model: { baseURL: modelURL, model: "small" },
    });
    const before = await getAgent(t, agent.id);
    const refused: Array<[unknown, number, RegExp]> = [
      [{ name: "renamed" }, 400, /name/],
      [{ packages: ["x"] }, 400, /packages/],
      [{ diskMB: 20_480 }, 400, /diskMB/],
      [{ model: { baseURL: "ftp://x/v1", model: "m" } }, 400, /http/],
      [
        { model: { baseURL: "http://localhost:11434/v1", model: "m" } },
        400,
        /is loopback.*--egress-host models\.local=127\.0\.0\.1:11434/,
      ],
      [
        { model: { baseURL: modelURL, model: "m", apiKey: "models/MODEL_KEY" } },
        400,
        /created without one/,
      ],
      [{ instructions: "x".repeat(32_769) }, 400, /32 KiB/],
      ['{"tags":{"__proto__":"x"}}', 400, /not allowed/],
    ];
    for (const [body, status, message] of refused) {
      const response = await t.call("PATCH", `/v1/agents/${agent.id}`, body);
      expect({ body, status: response.status }).toEqual({ body, status });
      expect(((await response.json()) as { message: string }).message).toMatch(message);
    }
    const after = await getAgent(t, agent.id);
    expect({ ...after, state: "-", updatedAt: "-", tools: [], sandboxId: "-" }).toEqual({
      ...before,
      state: "-",
      updatedAt: "-",
      tools: [],
      sandboxId: "-",
    });

    const unknown = "agt_000000000000000000000000";
    for (const [method, path] of [
      ["GET", `/v1/agents/${unknown}`],
      ["PATCH", `/v1/agents/${unknown}`],
      ["DELETE", `/v1/agents/${unknown}`],
      ["POST", `/v1/agents/${unknown}/stop`],
      ["POST", `/v1/agents/${unknown}/start`],
      ["GET", `/v1/agents/${unknown}/logs`],
    ] as const) {
      const response = await t.call(method, path, method === "PATCH" ? {} : undefined);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
      expect(await response.json()).toMatchObject({ error: "not_found" });
    }
    const malformed = await t.call("GET", "/v1/agents/sbx_123");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { message: string }).message).toMatch(/not an agent id/);
    expect((await t.call("DELETE", `/v1/agents/${agent.id}`)).status).toBe(204);
  });

  it("runs an agent whose key is in a store, and the key's value is nowhere in its sandbox", async (context) => {
    needSandboxes(context, t);
    const agent = await createAgent(t, {
      name: "keyed",
      model: { baseURL: modelURL, model: "small", apiKey: "models/MODEL_KEY" },
    });
    expect(agent.secretStore).toBe("models");
    expect(agent.model.apiKey).toBe("models/MODEL_KEY");
    const ready = await waitUntilReady(t, agent.id);
    // Attack: read every process's environment in the sandbox, the core's included, and the
    // workspace, looking for the value.
    const sandbox = await Sandbox.connect(ready.sandboxId as string, connection(t));
    const search = await sandbox.run([
      "sh",
      "-c",
      "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep CAIRN_SECRET_MODEL_KEY; grep -r -l -F \"$1\" /workspace /tmp /proc/[0-9]*/environ 2>/dev/null; echo done",
      "sh",
      keyValue,
    ]);
    expect(search.stdout).toMatch(/CAIRN_SECRET_MODEL_KEY=/);
    expect(search.stdout).not.toContain(keyValue);
    expect(search.stdout.trim().endsWith("done")).toBe(true);
    expect((await t.call("DELETE", `/v1/agents/${agent.id}`)).status).toBe(204);
  });
});

describe("an agent's disk", () => {
  it("is the service's default or diskMB within the sandboxes' range; one that does not fit crashes saying so, logged once", {
    timeout: 60_000,
  }, async (context) => {
    const warnings: string[] = [];
    const small = await startSandboxServer({
      sandboxes: { ...testSandboxOptions, capacity: { diskMB: 200 } },
      logger: consoleLogger({ level: "warn", write: (line) => warnings.push(line) }),
    });
    try {
      needSandboxes(context, small);
      const model = { baseURL: "http://model.test/v1", model: "small" };
      // The test service's range is 16-512 MB, default 32 (testSandboxOptions).
      expect((await createAgent(small, { name: "plain", model })).diskMB).toBe(32);
      const sized = await createAgent(small, { name: "sized", model, diskMB: 64 });
      expect(sized.diskMB).toBe(64);
      const ready = await waitUntilReady(small, sized.id);
      const sandbox = await (await small.call("GET", `/api/sandboxes/${ready.sandboxId}`)).json();
      expect(sandbox).toMatchObject({ diskMB: 64, status: "running" });

      // The agents as created (their states move on meanwhile).
      const created = async () =>
        (await listAgents(small)).map(({ id, name, diskMB }) => ({ id, name, diskMB }));
      const before = await created();
      for (const diskMB of [8, 513, 20.5, "64", null]) {
        const response = await small.call("POST", "/v1/agents", { name: "x", model, diskMB });
        expect({ diskMB, status: response.status }).toEqual({ diskMB, status: 400 });
        expect(((await response.json()) as { message: string }).message).toMatch(
          /diskMB must be (between 16 and 512|a whole number of MB)/,
        );
      }
      // A sandbox's disk cannot change, so neither can an agent's.
      const patched = await small.call("PATCH", `/v1/agents/${sized.id}`, { diskMB: 128 });
      expect(patched.status).toBe(400);
      expect(((await patched.json()) as { message: string }).message).toMatch(/diskMB/);
      expect(await created()).toEqual(before);

      // More than the runner has left to promise: the agent crashes with the runner's reason,
      // which the service's log says once.
      const big = await createAgent(small, { name: "big", model, diskMB: 512 });
      const crashed = await waitForAgent(small, big.id, (agent) => agent.state === "crashed");
      expect(crashed.lastError).toMatch(
        /^the agent could not start: not enough disk .*ask for less/,
      );
      const logged = warnings.filter((line) => line.includes(`agent ${big.id} could not start`));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line.split("not enough disk")).toHaveLength(2);
    } finally {
      await small?.stop();
      setLogger(consoleLogger());
    }
  });
});

describe("agents without sandboxes", () => {
  it("answers 503 with the reason where sandboxes cannot run", async () => {
    const plain = await startTestServer();
    try {
      const response = await plain.call("POST", "/v1/agents", {
        name: "x",
        model: { baseURL: "http://model.test/v1", model: "m" },
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({
        error: "sandbox_unavailable",
        message: expect.stringMatching(/each runs in a sandbox, and sandboxes are turned off/),
      });
      expect((await plain.call("GET", "/v1/agents")).status).toBe(503);

      // The routes are in the API reference, 503 among their answers.
      const document = await (await fetch(`${plain.server.url}/openapi.json`)).json();
      for (const path of [
        "/v1/agents",
        "/v1/agents/{id}",
        "/v1/agents/{id}/stop",
        "/v1/agents/{id}/start",
        "/v1/agents/{id}/logs",
      ]) {
        expect(Object.keys(document.paths[path] ?? {}).length).toBeGreaterThan(0);
      }
      expect(Object.keys(document.paths["/v1/agents"].post.responses).sort()).toEqual([
        "201",
        "400",
        "401",
        "404",
        "409",
        "415",
        "429",
        "500",
        "503",
      ]);
    } finally {
      await plain.stop();
    }
  });
});
