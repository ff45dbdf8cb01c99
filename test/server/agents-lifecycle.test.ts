// An agent's process against a real service and real sandboxes: it becomes ready and reaches its
// model through the egress proxy (and nothing else); killed, it crashes and is restarted, its
// workspace kept; stopped and started, and across a restart of the service, the workspace
// stays; its log follows; a template without Node >= 20 says so.

import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readServerSentEvents } from "../../src/core/http/sse.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { connection, needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import { agentLog, createAgent, getAgent, waitForAgent, waitUntilReady } from "./agents-helpers.js";
import type { TestServer } from "./helpers.js";

let model: FakeOpenAI;
let modelPort = "";
let t: TestServer | undefined;
let dataDir = "";
let rootfs = "";

/**
 * A root filesystem with a shell, sleep and a `node` that says it is v18: a template whose Node
 * is too old for the agent core.
 */
function oldNodeRootfs(): string {
  const root = mkdtempSync(join(tmpdir(), "cairn-old-node-"));
  chmodSync(root, 0o755);
  // The runner's sandboxes hold themselves open with sleep.
  const binaries = ["/usr/bin/dash", "/usr/bin/sleep"];
  const files = new Set(binaries);
  for (const binary of binaries) {
    for (const line of execFileSync("ldd", [binary], { encoding: "utf8" }).split("\n")) {
      const path = /(\/\S+) \(0x/.exec(line)?.[1];
      if (path !== undefined) files.add(path);
    }
  }
  for (const file of files) {
    const target = join(root, file.replace(/^\/lib/, "/usr/lib"));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  copyFileSync("/usr/bin/dash", join(root, "usr/bin/sh"));
  writeFileSync(join(root, "usr/bin/node"), "#!/usr/bin/sh\necho v18.19.0\n", { mode: 0o755 });
  for (const name of ["bin", "lib", "lib64"]) symlinkSync(`usr/${name}`, join(root, name));
  mkdirSync(join(root, "etc"));
  mkdirSync(join(root, "opt"));
  return root;
}

function serverOptions() {
  return {
    dataDir,
    egress: {
      hosts: {
        "model.test": `127.0.0.1:${modelPort}`,
        "elsewhere.test": `127.0.0.1:${modelPort}`,
      },
    },
    sandboxes: {
      diskRangeMB: { min: 16, max: 512, default: 32 },
      workspacePool: 1,
      templates: [{ name: "old-node", image: rootfs, cpu: 1000, memory: 1024 }],
    },
  };
}

beforeAll(async () => {
  model = await startFakeOpenAI([{ text: "pong" }, { text: "pong again" }]);
  modelPort = new URL(model.baseURL).port;
  dataDir = mkdtempSync(join(tmpdir(), "cairn-agents-"));
  rootfs = oldNodeRootfs();
  t = await startSandboxServer(serverOptions());
});

afterAll(async () => {
  await t?.stop();
  await model?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(rootfs, { recursive: true, force: true });
});

async function inSandbox(server: TestServer, sandboxId: string, script: string) {
  const sandbox = await Sandbox.connect(sandboxId, connection(server));
  return sandbox.run(["sh", "-c", script]);
}

const agentModel = () => ({ baseURL: `http://model.test:${modelPort}/v1`, model: "small" });

describe("an agent's process", () => {
  let agentId = "";

  it("becomes ready and reaches its model's host through the proxy, and no other host", async (context) => {
    needSandboxes(context, t);
    const created = await createAgent(t, { name: "runner", model: agentModel() });
    agentId = created.id;
    const ready = await waitUntilReady(t, agentId);
    expect(ready).toMatchObject({ state: "ready", restarts: 0 });
    expect(ready.lastError).toBeUndefined();

    const sandboxId = ready.sandboxId as string;
    const reach = await inSandbox(
      t,
      sandboxId,
      `curl -s -X POST -H 'content-type: application/json' -d '{"model":"small","messages":[{"role":"user","content":"ping"}]}' http://model.test:${modelPort}/v1/chat/completions`,
    );
    expect(reach.stdout).toContain("pong");
    // Attack: another host mapped to the same address, which nothing allows this agent.
    const elsewhere = await inSandbox(
      t,
      sandboxId,
      `curl -s -o /dev/null -w '%{http_code}' http://elsewhere.test:${modelPort}/v1/models`,
    );
    expect(elsewhere.stdout).not.toBe("200");
    expect(model.requests.filter((request) => request.path.includes("models"))).toEqual([]);
    expect(await agentLog(t, agentId)).toMatch(/service: ready: run_command/);
  });

  it("is restarted after its process is killed, and keeps its workspace", async (context) => {
    needSandboxes(context, t);
    const before = await getAgent(t, agentId);
    const sandboxId = before.sandboxId as string;
    await inSandbox(t, sandboxId, "echo kept > /workspace/notes.txt");
    const kill = await inSandbox(t, sandboxId, "pkill -KILL -f '^node /opt/cairn/agent-core'");
    expect(kill.exitCode).toBe(0);

    const after = await waitUntilReady(t, agentId, 1);
    expect(after.restarts).toBe(1);
    expect(after.lastError).toMatch(/the agent process exited \(killed by SIGKILL\)/);
    expect(await agentLog(t, agentId)).toMatch(
      /crashed: the agent process exited[^\n]*\nservice: restarting in 1 s/,
    );
    const read = await inSandbox(t, after.sandboxId as string, "cat /workspace/notes.txt");
    expect(read.stdout).toBe("kept\n");
  });

  it("stops and starts again, keeping its workspace; its log follows", async (context) => {
    needSandboxes(context, t);
    const before = await getAgent(t, agentId);
    const follow = await t.call("GET", `/v1/agents/${agentId}/logs?follow=1&tail=0`);
    expect(follow.status).toBe(200);
    expect(follow.headers.get("content-type")).toMatch(/^text\/event-stream/);

    const stopped = await t.call("POST", `/v1/agents/${agentId}/stop`);
    expect(stopped.status).toBe(200);
    const record = (await stopped.json()) as { state: string; sandboxId?: string };
    expect(record.state).toBe("stopped");
    expect(record.sandboxId).toBeUndefined();
    const old = await (await t.call("GET", `/api/sandboxes/${before.sandboxId}`)).json();
    expect(old).toMatchObject({ status: "stopped" });

    const started = await t.call("POST", `/v1/agents/${agentId}/start`);
    expect(started.status).toBe(200);
    expect(((await started.json()) as { state: string }).state).toBe("starting");
    const ready = await waitUntilReady(t, agentId);
    expect(ready.sandboxId).not.toBe(before.sandboxId);
    expect(ready.restarts).toBe(1);
    const read = await inSandbox(t, ready.sandboxId as string, "cat /workspace/notes.txt");
    expect(read.stdout).toBe("kept\n");

    // The followed log saw the stop and the start, as {time, stream, line} events.
    const lines: Array<{ time: string; stream: string; line: string }> = [];
    for await (const event of readServerSentEvents(follow.body as ReadableStream<Uint8Array>)) {
      lines.push(JSON.parse(event.data));
      // The core's own word that it is ready, on its stderr.
      if (lines.at(-1)?.stream === "stderr" && /ready/.test(lines.at(-1)?.line ?? "")) break;
    }
    await follow.body?.cancel();
    expect(lines[0]).toEqual({
      time: expect.any(String),
      stream: "service",
      line: "stopped; its workspace is kept",
    });
    expect(lines.map((line) => line.line)).toEqual(
      expect.arrayContaining(["starting the agent core", expect.stringMatching(/^ready: /)]),
    );
  });

  it("comes back ready after the service restarts, with its workspace", async (context) => {
    needSandboxes(context, t);
    const before = await getAgent(t, agentId);
    await t.server.close();
    t = await startSandboxServer(serverOptions());
    needSandboxes(context, t);
    const after = await waitUntilReady(t, agentId);
    expect(after.sandboxId).not.toBe(before.sandboxId);
    const read = await inSandbox(t, after.sandboxId as string, "cat /workspace/notes.txt");
    expect(read.stdout).toBe("kept\n");
    // A stopped agent stays stopped across a restart.
    await t.call("POST", `/v1/agents/${agentId}/stop`);
    await t.server.close();
    t = await startSandboxServer(serverOptions());
    needSandboxes(context, t);
    expect((await getAgent(t, agentId)).state).toBe("stopped");
  });

  it("crashes with a clear error on a template without Node 20 or later, and is not restarted", async (context) => {
    needSandboxes(context, t);
    const created = await createAgent(t, {
      name: "old",
      template: "old-node",
      model: agentModel(),
    });
    const crashed = await waitForAgent(t, created.id, (agent) => agent.state === "crashed");
    expect(crashed.lastError).toMatch(
      /the template "old-node" has no Node 20 or later, which the agent core needs \(it has v18\.19\.0\)/,
    );
    expect(await agentLog(t, created.id)).toMatch(/not restarted/);
    expect(crashed.restarts).toBe(0);
  });
});
