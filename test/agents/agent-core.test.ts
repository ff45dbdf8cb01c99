// The agent core as it runs in a sandbox: the built file under the system's Node 20, a JSON-lines
// conversation on stdin/stdout, a local OpenAI-compatible server, and a forward proxy in between
// (HTTP_PROXY), as the sandbox's egress proxy would be.

import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, connect, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  AgentCoreConfig,
  FinishEvent,
  LlmEvent,
  ReadyEvent,
  ToolCallEvent,
  ToolOutputEvent,
  TurnErrorEvent,
} from "../../src/agents/protocol.js";
import { CertificateAuthority } from "../../src/sandbox/runner/egress/certificate-authority.js";
import { EgressProxy } from "../../src/sandbox/runner/egress/proxy.js";
import {
  defaultUsage,
  type FakeOpenAI,
  type FakeStep,
  startFakeOpenAI,
} from "../helpers/fake-openai.js";
import {
  type CoreProcess,
  eventTypes,
  isTurnEnd,
  sandboxNodeMissing,
  startCore,
  turnEvents,
} from "./helpers/core-process.js";
import { type ForwardProxy, startForwardProxy } from "./helpers/forward-proxy.js";

const placeholder = "cairn_sealed_0f3a9c52d4e1b7a8c6f0e2d9b1a4c7e3";
const keyEnv = { CAIRN_SECRET_MODEL_KEY: placeholder };

let workspace: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeEach(async (context) => {
  const missing = sandboxNodeMissing();
  if (missing !== undefined) context.skip(missing);
  workspace = await mkdtemp(join(tmpdir(), "cairn-agent-core-"));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rm(workspace, { recursive: true, force: true });
});

function configFor(baseURL: string, overrides: Partial<AgentCoreConfig> = {}): AgentCoreConfig {
  return {
    model: { baseURL, model: "fake-model", apiKeyEnv: "CAIRN_SECRET_MODEL_KEY" },
    instructions: "You are a careful test agent.",
    packages: [],
    ...overrides,
  };
}

async function fake(script: FakeStep[]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(script);
  cleanups.push(() => server.close());
  return server;
}

async function proxy(): Promise<ForwardProxy> {
  const server = await startForwardProxy();
  cleanups.push(() => server.close());
  return server;
}

async function core(
  config: AgentCoreConfig,
  env: Record<string, string> = {},
): Promise<CoreProcess> {
  const process = startCore({ config, workspace, env: { ...keyEnv, ...env } });
  cleanups.push(() => process.close());
  return process;
}

async function ready(agent: CoreProcess): Promise<ReadyEvent> {
  return agent.waitFor((event): event is ReadyEvent => event.type === "ready");
}

/** A core on a fake model that answers with `script`, once it is ready. */
async function agentOn(script: FakeStep[], env: Record<string, string> = {}) {
  const model = await fake(script);
  const agent = await core(configFor(model.baseURL), env);
  return { model, agent, tools: (await ready(agent)).tools };
}

/** TLS on 127.0.0.1 in front of `port`, with a certificate for localhost that `authority` signed. */
async function tlsInFront(authority: CertificateAuthority, port: number): Promise<number> {
  const server = createTlsServer(
    { SNICallback: (_name, done) => done(null, authority.contextFor("localhost")) },
    (socket) => {
      const upstream = connect(port, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    },
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

function begin(agent: CoreProcess, turnId: string, content: string): void {
  agent.send({ type: "turn", turnId, messages: [{ role: "user", content }] });
}

async function turn(agent: CoreProcess, turnId: string, content: string) {
  begin(agent, turnId, content);
  return agent.waitFor(isTurnEnd(turnId));
}

/** Starts a turn and waits until it asks the service to run a command. */
async function beginUntilCommand(agent: CoreProcess, turnId: string): Promise<ToolCallEvent> {
  begin(agent, turnId, "Go");
  return agent.waitFor(
    (event): event is ToolCallEvent =>
      event.type === "tool-call" && event.turnId === turnId && event.runsOn === "service",
  );
}

const noOutput = { exitCode: 0, stdout: "", stderr: "" };

function answerCommand(agent: CoreProcess, command: ToolCallEvent, output: unknown = noOutput) {
  agent.send({
    type: "tool-result",
    turnId: command.turnId,
    toolCallId: command.toolCallId,
    output,
    isError: false,
  });
}

function toolOutputs(agent: CoreProcess, turnId: string): ToolOutputEvent[] {
  return turnEvents(agent, turnId).filter(
    (event): event is ToolOutputEvent => event.type === "tool-output",
  );
}

const call = (id: string, name: string, input: unknown) => ({
  id,
  name,
  arguments: JSON.stringify(input),
});

describe("the agent core", () => {
  it("runs a turn through the proxy: writes a file, asks the service to run a command, answers", async () => {
    const forward = await proxy();
    const { model, agent, tools } = await agentOn(
      [
        {
          toolCalls: [
            call("call_w", "write_file", { path: "notes/hello.txt", content: "hi there" }),
          ],
        },
        { toolCalls: [call("call_r", "run_command", { command: "cat notes/hello.txt" })] },
        { text: "The file says hi there." },
      ],
      { HTTP_PROXY: forward.url },
    );
    expect(tools.map((tool) => tool.name)).toEqual([
      "run_command",
      "read_file",
      "write_file",
      "list_files",
    ]);

    const command = await beginUntilCommand(agent, "turn_1");
    expect(command).toMatchObject({
      turnId: "turn_1",
      toolCallId: "call_r",
      input: { command: "cat notes/hello.txt" },
      runsOn: "service",
    });
    const commandOutput = { exitCode: 0, stdout: "hi there", stderr: "" };
    answerCommand(agent, command, commandOutput);
    const end = await agent.waitFor(isTurnEnd("turn_1"));

    const events = turnEvents(agent, "turn_1");
    expect(eventTypes(events)).toEqual([
      "llm",
      "tool-call:write_file",
      "tool-output",
      "llm",
      "tool-call:run_command",
      "text-delta",
      "llm",
      "finish",
    ]);
    expect(await readFile(join(workspace, "notes", "hello.txt"), "utf8")).toBe("hi there");
    expect(toolOutputs(agent, "turn_1")).toEqual([
      expect.objectContaining({
        toolCallId: "call_w",
        isError: false,
        output: { path: join("notes", "hello.txt"), bytes: 8 },
      }),
    ]);
    const text = events.map((event) => (event.type === "text-delta" ? event.delta : "")).join("");
    expect(text).toBe("The file says hi there.");

    const llm = events.filter((event): event is LlmEvent => event.type === "llm");
    for (const [index, event] of llm.entries()) {
      expect(event.usage).toEqual({
        promptTokens: defaultUsage.prompt_tokens,
        completionTokens: defaultUsage.completion_tokens,
      });
      expect(event.model).toBe("fake-model");
      expect(event.request.messageCount).toBe(2 + index * 2);
      expect(event.endedAt).toBeGreaterThanOrEqual(event.startedAt);
    }
    expect(llm.map((event) => event.finishReason)).toEqual(["tool_calls", "tool_calls", "stop"]);
    expect(llm[0]?.response.toolCalls).toEqual([
      {
        id: "call_w",
        type: "function",
        function: {
          name: "write_file",
          arguments: '{"path":"notes/hello.txt","content":"hi there"}',
        },
      },
    ]);

    expect(end).toMatchObject({ type: "finish", finishReason: "stop" });
    expect((end as FinishEvent).messages.map((message) => message.role)).toEqual([
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect((end as FinishEvent).messages.at(-1)).toEqual({
      role: "assistant",
      content: "The file says hi there.",
    });

    // The model got the system prompt, the tools, a streamed request with usage, and each result.
    const bodies = model.requests.map((request) => request.body as Record<string, unknown>);
    expect(bodies[0]).toMatchObject({
      model: "fake-model",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are a careful test agent." },
        { role: "user", content: "Go" },
      ],
    });
    expect((bodies[0]?.tools as unknown[] | undefined)?.length).toBe(4);
    expect((bodies[2]?.messages as unknown[] | undefined)?.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_r",
      content: JSON.stringify(commandOutput),
    });

    // Every call went through the proxy, carrying exactly the placeholder as the key.
    expect(forward.records.map((record) => [record.method, record.target])).toEqual(
      Array.from({ length: 3 }, () => ["POST", `${model.baseURL}/chat/completions`]),
    );
    for (const record of forward.records) {
      expect(record.headers.authorization).toBe(`Bearer ${placeholder}`);
    }
  });

  it("reaches an https model through a CONNECT tunnel, trusting NODE_EXTRA_CA_CERTS", async () => {
    const model = await fake([{ text: "Hello over TLS." }]);
    const authority = CertificateAuthority.create("agent core test");
    const caDirectory = await mkdtemp(join(tmpdir(), "cairn-agent-ca-"));
    cleanups.push(() => rm(caDirectory, { recursive: true, force: true }));
    const caFile = join(caDirectory, "ca.pem");
    await writeFile(caFile, authority.certificatePem);
    const port = await tlsInFront(authority, Number(new URL(model.baseURL).port));
    const forward = await proxy();

    const agent = await core(configFor(`https://localhost:${port}/v1`), {
      HTTPS_PROXY: forward.url,
      NODE_EXTRA_CA_CERTS: caFile,
    });
    await ready(agent);
    const end = await turn(agent, "turn_tls", "Hello?");
    expect(end).toMatchObject({ type: "finish" });
    expect(forward.records).toEqual([
      expect.objectContaining({ method: "CONNECT", target: `localhost:${port}` }),
    ]);
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${placeholder}`);
  });

  it("refuses a model whose certificate it does not trust", async () => {
    const model = await fake([{ text: "Never read." }]);
    const port = await tlsInFront(
      CertificateAuthority.create("untrusted"),
      Number(new URL(model.baseURL).port),
    );
    const forward = await proxy();
    const agent = await core(configFor(`https://localhost:${port}/v1`), {
      HTTPS_PROXY: forward.url,
    });
    await ready(agent);
    const end = await turn(agent, "turn_untrusted", "Hello?");
    expect(end).toMatchObject({ type: "turn-error", kind: "other" });
    expect((end as TurnErrorEvent).message).toMatch(/certificate/i);
  });

  it("reports a 4xx from the model as upstream_4xx with the status and the body's message", async () => {
    const { agent } = await agentOn([{ status: 404 }]);
    const end = await turn(agent, "turn_404", "Hello?");
    expect(end).toEqual({
      type: "turn-error",
      turnId: "turn_404",
      kind: "upstream_4xx",
      status: 404,
      message: "the model endpoint answered 404: Model not found",
    });
  });

  it("reports a 5xx and a refused connection as transient", async () => {
    const { agent } = await agentOn([{ status: 503 }]);
    expect(await turn(agent, "turn_503", "Hello?")).toMatchObject({
      kind: "transient",
      status: 503,
    });

    // A port nothing listens on: tried twice (one retry), then transient.
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const offline = await core(configFor(`http://127.0.0.1:${port}/v1`));
    await ready(offline);
    const end = await turn(offline, "turn_offline", "Hello?");
    expect(end).toMatchObject({ type: "turn-error", kind: "transient" });
    expect((end as TurnErrorEvent).message).toMatch(/ECONNREFUSED/);
  });

  it("sends no Authorization when the config names no key", async () => {
    const model = await fake([{ text: "Local model here." }]);
    const agent = await core({
      ...configFor(model.baseURL),
      model: { baseURL: model.baseURL, model: "m" },
    });
    await ready(agent);
    expect(await turn(agent, "turn_local", "Hi")).toMatchObject({ type: "finish" });
    expect(model.requests[0]?.headers.authorization).toBeUndefined();
  });
});

describe("the agent core behind the sandbox's egress proxy", () => {
  /** The runner's egress proxy, reached over TCP as a sandbox reaches it through its relay. */
  async function egressProxy(
    allowlist: string[],
    hosts: Record<string, { address: string; port: number }>,
  ): Promise<string> {
    const folder = await mkdtemp(join(tmpdir(), "cairn-agent-egress-"));
    const egress = await EgressProxy.start(join(folder, "proxy", "proxy.sock"), {
      sandboxId: "sbx_core",
      policyFor: () => ({ store: "models", allowlist, secrets: [] }),
      hosts: new Map(Object.entries(hosts)),
    });
    const relay = createNetServer((socket) => {
      const inner = connect(egress.socketPath);
      socket.pipe(inner).pipe(socket);
      socket.on("error", () => inner.destroy());
      inner.on("error", () => socket.destroy());
    });
    relay.listen(0, "127.0.0.1");
    await once(relay, "listening");
    cleanups.push(async () => {
      await new Promise((resolve) => relay.close(resolve));
      await egress.close();
      await rm(folder, { recursive: true, force: true });
    });
    return `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  }

  it("tells the proxy's refusal from the model's answer, and logs the refusal", async () => {
    // The model refuses, saying in its own Proxy-Status that it is the proxy.
    const model = await scriptedServer([
      (_request, response) => {
        response.writeHead(403, {
          "content-type": "application/json",
          "proxy-status": "cairn-egress; error=http_request_denied",
        });
        response.end(JSON.stringify({ error: { message: "no access to this model" } }));
      },
    ]);
    const proxyURL = await egressProxy(["models.test.internal", "models.invalid"], {
      "models.test.internal": { address: "127.0.0.1", port: Number(new URL(model.baseURL).port) },
    });
    const env = { HTTP_PROXY: proxyURL, HTTPS_PROXY: proxyURL };

    // A name that does not resolve (a typo, a missing --egress-host): the proxy answers itself.
    const typo = await core(configFor("http://models.invalid/v1"), env);
    await ready(typo);
    const refusal =
      "the sandbox's egress proxy refused the request to models.invalid: models.invalid does not resolve (ENOTFOUND). Is the model's host named with --egress-host, or on the secret store's allowlist?";
    expect(await turn(typo, "turn_typo", "Hello?")).toEqual({
      type: "turn-error",
      turnId: "turn_typo",
      kind: "other",
      message: refusal,
    });
    expect(typo.stderr()).toContain(`agent-core: turn turn_typo: ${refusal}\n`);

    // Off the allowlist, over https: the proxy refuses the CONNECT.
    const elsewhere = await core(configFor("https://api.example.com/v1"), env);
    await ready(elsewhere);
    const refused = await turn(elsewhere, "turn_elsewhere", "Hello?");
    expect(refused).toMatchObject({ type: "turn-error", kind: "other" });
    expect(refused).not.toHaveProperty("status");
    expect((refused as TurnErrorEvent).message).toMatch(
      /^the sandbox's egress proxy refused the request to api\.example\.com: api\.example\.com:443 is not on the allowlist of secret store models \(models\.test\.internal, models\.invalid\)\. Is the model's host named with --egress-host/,
    );

    // The model's 403 came through the proxy: the model's, whatever its headers claim.
    const relayed = await core(
      { ...configFor(""), model: { baseURL: "http://models.test.internal/v1", model: "m" } },
      env,
    );
    await ready(relayed);
    expect(await turn(relayed, "turn_model", "Hello?")).toEqual({
      type: "turn-error",
      turnId: "turn_model",
      kind: "upstream_4xx",
      status: 403,
      message: "the model endpoint answered 403: no access to this model",
    });
    expect(relayed.stderr()).not.toContain("egress proxy");
  });
});

/** A model server whose answers the test writes itself, one handler per request. */
async function scriptedServer(
  handlers: Array<(request: IncomingMessage, response: ServerResponse) => void>,
) {
  const closedRequests: number[] = [];
  let count = 0;
  const server = createServer((request, response) => {
    const index = count++;
    request.resume();
    response.on("close", () => closedRequests.push(index));
    const handler = handlers[index];
    if (handler === undefined) response.writeHead(500).end();
    else request.on("end", () => handler(request, response));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, closedRequests };
}

const sse = (response: ServerResponse, chunks: unknown[]) => {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
};
const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta: value, finish_reason: finish }],
});

describe("the agent core's turns", () => {
  it("passes reasoning on, then aborts a streaming call and cancels its request", async () => {
    const server = await scriptedServer([
      (_request, response) =>
        sse(response, [
          delta({ reasoning_content: "Let me think" }),
          delta({ reasoning: " hard." }),
          delta({ content: "Partial" }),
        ]),
      (_request, response) => {
        sse(response, [delta({ content: "Fresh answer." }), delta({}, "stop")]);
        response.end("data: [DONE]\n\n");
      },
    ]);
    const agent = await core(configFor(server.baseURL));
    await ready(agent);
    begin(agent, "turn_a", "Think");
    await agent.waitFor((event) => event.type === "text-delta" && event.turnId === "turn_a");
    agent.send({ type: "abort", turnId: "turn_a" });
    const end = await agent.waitFor(isTurnEnd("turn_a"));
    expect(end).toEqual({
      type: "turn-error",
      turnId: "turn_a",
      kind: "other",
      message: "aborted",
    });
    expect(eventTypes(turnEvents(agent, "turn_a"))).toEqual([
      "reasoning-delta",
      "text-delta",
      "turn-error",
    ]);
    const reasoning = turnEvents(agent, "turn_a")
      .map((event) => (event.type === "reasoning-delta" ? event.delta : ""))
      .join("");
    expect(reasoning).toBe("Let me think hard.");
    // The core is free for the next turn, and the aborted request was closed.
    expect(await turn(agent, "turn_b", "Again")).toMatchObject({ type: "finish" });
    expect(server.closedRequests).toContain(0);
  });

  it("aborts a turn waiting for run_command, and ignores the late result", async () => {
    const { model, agent } = await agentOn([
      { toolCalls: [call("call_slow", "run_command", { command: "sleep 100" })] },
      { text: "After the abort." },
    ]);
    const command = await beginUntilCommand(agent, "turn_s");
    agent.send({ type: "abort", turnId: "turn_s" });
    expect(await agent.waitFor(isTurnEnd("turn_s"))).toMatchObject({ message: "aborted" });
    answerCommand(agent, command);
    expect(await turn(agent, "turn_next", "Hi")).toMatchObject({ type: "finish" });
    expect(eventTypes(turnEvents(agent, "turn_s"))).toEqual([
      "llm",
      "tool-call:run_command",
      "turn-error",
    ]);
    expect(agent.stderr()).toMatch(
      /tool-result for turn_s\/call_slow answers no pending tool call/,
    );
    expect(model.requests).toHaveLength(2);
  });

  it("runs one turn at a time, and survives lines that are not the protocol", async () => {
    const { agent } = await agentOn([
      { toolCalls: [call("call_c", "run_command", { command: "true" })] },
      { text: "Done." },
    ]);
    agent.send("this is not JSON");
    agent.send({ type: "dance", turnId: "x" });
    agent.send({ type: "turn", turnId: "turn_bad", messages: [{ content: "no role" }] });
    agent.send([1, 2, 3]);
    const command = await beginUntilCommand(agent, "turn_1");
    begin(agent, "turn_2", "Me too");
    expect(await agent.waitFor(isTurnEnd("turn_2"))).toMatchObject({
      type: "turn-error",
      kind: "other",
      message: "turn turn_1 is still running: one turn at a time",
    });
    answerCommand(agent, command);
    expect(await agent.waitFor(isTurnEnd("turn_1"))).toMatchObject({ type: "finish" });
    expect(
      agent.events.filter((event) => "turnId" in event && event.turnId === "turn_bad"),
    ).toEqual([]);
    const log = agent.stderr();
    expect(log).toMatch(/ignored a line on stdin: not JSON/);
    expect(log).toMatch(/unknown message type "dance"/);
    expect(log).toMatch(/messages\[0\] needs a role/);
    expect(log).toMatch(/a message must be a JSON object/);
  });

  it("stops after 16 model calls that all call tools", async () => {
    const { model, agent } = await agentOn(
      Array.from({ length: 17 }, (_, index) => ({
        toolCalls: [call(`call_${index}`, "list_files", {})],
      })),
    );
    const end = await turn(agent, "turn_loop", "Loop");
    expect(end).toMatchObject({ type: "turn-error", kind: "other" });
    expect((end as TurnErrorEvent).message).toMatch(/still calling tools after 16 model calls/);
    expect(model.requests).toHaveLength(16);
    expect(toolOutputs(agent, "turn_loop")).toHaveLength(15);
  });

  it("answers a call to an unknown tool or with arguments that are not JSON as a tool error", async () => {
    const { agent } = await agentOn([
      {
        toolCalls: [
          call("call_u", "format_disk", {}),
          { id: "call_j", name: "read_file", arguments: "{not json" },
        ],
      },
      { text: "Sorry." },
    ]);
    expect(await turn(agent, "turn_u", "Go")).toMatchObject({ type: "finish" });
    const outputs = toolOutputs(agent, "turn_u");
    expect(outputs.map((output) => output.isError)).toEqual([true, true]);
    expect(outputs[0]?.output).toMatch(/no tool named "format_disk"/);
    expect(outputs[1]?.output).toMatch(/arguments are not JSON/);
  });
});

describe("the agent core's file tools", () => {
  it("refuses paths that leave the workspace, by .., absolute or through a link", async () => {
    const outside = await mkdtemp(join(tmpdir(), "cairn-agent-outside-"));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await writeFile(join(outside, "secret.txt"), "top secret");
    await symlink(join(outside, "secret.txt"), join(workspace, "link-to-secret"));
    await symlink(outside, join(workspace, "link-to-outside"));
    await mkdir(join(workspace, "inside"));
    await symlink(join(workspace, "inside"), join(workspace, "link-inside"));
    const attempts = [
      ["read_file", { path: "../secret.txt" }],
      ["read_file", { path: join(outside, "secret.txt") }],
      ["read_file", { path: "link-to-secret" }],
      ["read_file", { path: "link-to-outside/secret.txt" }],
      ["write_file", { path: "link-to-outside/new.txt", content: "escaped" }],
      ["write_file", { path: "link-to-secret", content: "overwritten" }],
      ["write_file", { path: "../escaped.txt", content: "escaped" }],
      ["list_files", { path: "link-to-outside" }],
      ["list_files", { path: "/" }],
      ["write_file", { path: "link-inside/ok.txt", content: "fine" }],
    ] as const;
    const { agent } = await agentOn([
      { toolCalls: attempts.map(([name, input], index) => call(`call_${index}`, name, input)) },
      { text: "Done." },
    ]);
    expect(await turn(agent, "turn_escape", "Escape")).toMatchObject({ type: "finish" });
    const outputs = toolOutputs(agent, "turn_escape");
    expect(outputs.map((output) => output.isError)).toEqual([...Array(9).fill(true), false]);
    for (const output of outputs.slice(0, 9)) {
      expect(output.output).toMatch(/outside the workspace/);
    }
    expect(JSON.stringify(agent.events)).not.toContain("top secret");
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("top secret");
    await expect(readFile(join(outside, "new.txt"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(workspace, "inside", "ok.txt"), "utf8")).toBe("fine");
  });

  it("reads at most 1 MiB of a file and lists folders", async () => {
    await writeFile(join(workspace, "big.txt"), "x".repeat(1536 * 1024));
    await mkdir(join(workspace, "sub"));
    const { agent } = await agentOn([
      {
        toolCalls: [
          call("call_big", "read_file", { path: "big.txt" }),
          call("call_ls", "list_files", {}),
        ],
      },
      { text: "Done." },
    ]);
    await turn(agent, "turn_read", "Read");
    const [read, list] = toolOutputs(agent, "turn_read");
    const file = read?.output as { content: string; size: number; truncated: boolean };
    expect(file.content.length).toBe(1024 * 1024);
    expect(file).toMatchObject({ size: 1536 * 1024, truncated: true });
    expect(list?.output).toEqual({
      path: ".",
      entries: [
        { name: "big.txt", type: "file", size: 1536 * 1024 },
        { name: "sub", type: "directory" },
      ],
      truncated: false,
    });
  });
});

async function installPackage(name: string, files: Record<string, string>): Promise<void> {
  const directory = join(workspace, ".cairn", "packages", "node_modules", name);
  await mkdir(directory, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await writeFile(join(directory, file), content);
  }
}

describe("the agent core's packages", () => {
  it("lists and calls the tools of installed packages (ESM named export, CommonJS default)", async () => {
    await installPackage("@acme/math-tools", {
      "package.json": JSON.stringify({
        name: "@acme/math-tools",
        type: "module",
        exports: { ".": { import: "./index.js" } },
      }),
      "index.js": `export const tools = [{
        name: "add",
        description: "Adds two numbers.",
        parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
        async execute({ a, b }, context) {
          return { sum: a + b, workspace: context.workspace, aborted: context.signal.aborted };
        },
      }];`,
    });
    await installPackage("greeter", {
      "package.json": JSON.stringify({ name: "greeter", main: "lib.js" }),
      "lib.js": `module.exports = { tools: [{
        name: "greet",
        description: "Greets someone.",
        parameters: { type: "object", properties: { name: { type: "string" } } },
        execute(input) { if (!input.name) throw new Error("whom should I greet?"); return "Hello, " + input.name; },
      }] };`,
    });
    const model = await fake([
      {
        toolCalls: [
          call("call_add", "add", { a: 2, b: 40 }),
          call("call_greet", "greet", { name: "Ada" }),
          call("call_fail", "greet", {}),
        ],
      },
      { text: "42, and hello." },
    ]);
    const agent = await core(
      configFor(model.baseURL, { packages: ["@acme/math-tools", "greeter"] }),
    );
    const { tools } = await ready(agent);
    expect(tools.map((tool) => tool.name)).toEqual([
      "run_command",
      "read_file",
      "write_file",
      "list_files",
      "add",
      "greet",
    ]);
    expect(tools[4]).toEqual({
      name: "add",
      description: "Adds two numbers.",
      parameters: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
    });
    expect(await turn(agent, "turn_pkg", "Add")).toMatchObject({ type: "finish" });
    const outputs = toolOutputs(agent, "turn_pkg");
    expect(outputs.map(({ output, isError }) => ({ output, isError }))).toEqual([
      { output: { sum: 42, workspace, aborted: false }, isError: false },
      { output: "Hello, Ada", isError: false },
      { output: "whom should I greet?", isError: true },
    ]);
    const sent = (model.requests[1]?.body as { messages: unknown[] } | undefined)?.messages.slice(
      -3,
    );
    expect(sent).toEqual([
      {
        role: "tool",
        tool_call_id: "call_add",
        content: JSON.stringify({ sum: 42, workspace, aborted: false }),
      },
      { role: "tool", tool_call_id: "call_greet", content: "Hello, Ada" },
      { role: "tool", tool_call_id: "call_fail", content: "Error: whom should I greet?" },
    ]);
  });

  it("installs and calls the example package of docs/agent-tools.md, as written there", async () => {
    const doc = await readFile(new URL("../../docs/agent-tools.md", import.meta.url), "utf8");
    const files = Object.fromEntries(
      [...doc.matchAll(/```(?:json|js) ([\w.-]+)\n([\s\S]*?)```/g)].map((match) => [
        match[1] ?? "",
        match[2] ?? "",
      ]),
    );
    expect(Object.keys(files)).toEqual(["package.json", "index.js"]);
    const name = JSON.parse(files["package.json"] ?? "{}").name as string;
    await installPackage(name, files);
    await writeFile(join(workspace, "draft.txt"), "Two lines\nof five words\n");
    const model = await fake([
      {
        toolCalls: [
          call("call_count", "count_words", { path: "draft.txt" }),
          call("call_slug", "slugify", { text: "Héllo, Wörld!" }),
          call("call_out", "count_words", { path: "../outside.txt" }),
        ],
      },
      { text: "Done." },
    ]);
    const agent = await core(configFor(model.baseURL, { packages: [name] }));
    const { tools } = await ready(agent);
    expect(tools.slice(4).map((tool) => tool.name)).toEqual(["count_words", "slugify"]);
    await turn(agent, "turn_doc", "Count");
    expect(
      toolOutputs(agent, "turn_doc").map(({ output, isError }) => ({ output, isError })),
    ).toEqual([
      { output: { words: 5, lines: 3, characters: 24 }, isError: false },
      { output: "hello-world", isError: false },
      { output: "../outside.txt is outside the workspace", isError: true },
    ]);
  });

  const invalid: Array<[string, string, RegExp]> = [
    [
      "no execute",
      `export const tools = [{ name: "x", description: "X.", parameters: { type: "object" } }];`,
      /package broken-tools: tools\[0\] \(x\) needs an execute\(input, context\) function/,
    ],
    [
      "a bad name",
      `export const tools = [{ name: "has space", description: "X.", parameters: { type: "object" }, execute() {} }];`,
      /package broken-tools: tools\[0\] has the name "has space"/,
    ],
    [
      "no parameters",
      `export const tools = [{ name: "x", description: "X.", execute() {} }];`,
      /package broken-tools: tools\[0\] \(x\) needs parameters: a JSON Schema object/,
    ],
    [
      "no tools",
      `export const helpers = [];`,
      /package broken-tools: its main module exports no tools/,
    ],
    [
      "a built-in's name",
      `export const tools = [{ name: "read_file", description: "X.", parameters: { type: "object" }, execute() {} }];`,
      /package broken-tools: the tool name read_file is already taken by a built-in tool/,
    ],
    [
      "a module that throws",
      `throw new Error("boom at load");`,
      /package broken-tools: its main module failed to load: boom at load/,
    ],
  ];
  it.each(invalid)(
    "fails with a fatal naming the package when it exports %s",
    async (_label, source, message) => {
      await installPackage("broken-tools", {
        "package.json": JSON.stringify({ name: "broken-tools", type: "module", main: "index.js" }),
        "index.js": source,
      });
      const agent = await core(configFor("http://127.0.0.1:9/v1", { packages: ["broken-tools"] }));
      const fatal = await agent.waitFor((event) => event.type === "fatal");
      expect(fatal).toMatchObject({ type: "fatal", message: expect.stringMatching(message) });
      expect(await agent.exited).toBe(1);
      expect(agent.events.some((event) => event.type === "ready")).toBe(false);
    },
  );

  it("fails with a fatal naming a package that is not installed, or a name that is not npm's", async () => {
    const missing = await core(configFor("http://127.0.0.1:9/v1", { packages: ["not-there"] }));
    expect(await missing.waitFor((event) => event.type === "fatal")).toMatchObject({
      message: expect.stringMatching(/^package not-there: it is not installed/),
    });
    const escaping = await core(configFor("http://127.0.0.1:9/v1", { packages: ["../../etc"] }));
    expect(await escaping.waitFor((event) => event.type === "fatal")).toMatchObject({
      message: "package ../../etc: this is not an npm package name",
    });
  });
});

describe("the agent core's configuration", () => {
  it("fails with a fatal when the configuration or the key's placeholder is missing", async () => {
    const agent = startCore({
      config: configFor("ftp://nowhere"),
      workspace,
      env: keyEnv,
    });
    cleanups.push(() => agent.close());
    expect(await agent.waitFor((event) => event.type === "fatal")).toEqual({
      type: "fatal",
      message: "CAIRN_AGENT_CONFIG: model.baseURL must be an http(s) URL",
    });
    expect(await agent.exited).toBe(1);
    const keyless = startCore({ config: configFor("http://127.0.0.1:9/v1"), workspace });
    cleanups.push(() => keyless.close());
    expect(await keyless.waitFor((event) => event.type === "fatal")).toMatchObject({
      message: expect.stringMatching(
        /^CAIRN_SECRET_MODEL_KEY \(the model key's placeholder\) is not set/,
      ),
    });
  });
});
