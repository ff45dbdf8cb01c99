import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportedSpan } from "../../src/core/wire/index.js";
import { formatTraceTree } from "../../src/tracing/export/format-tree.js";
import { needSandboxes } from "../sandbox/helpers.js";
import { agentLog, createAgent, waitUntilReady } from "./agents-helpers.js";
import {
  modelKey,
  partTypes,
  sendMessage,
  startTurnsHarness,
  type TurnsHarness,
} from "./agents-turns-helpers.js";
import { startTestServer } from "./helpers.js";

interface SpanNode {
  span_id: string;
  name: string;
  kind: string;
  model: string | null;
  session_id: string | null;
  tags: string[];
  input: string | null;
  output: string | null;
  status: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  cost_usd: number | null;
  attributes: Record<string, unknown>;
  children: SpanNode[];
}

interface StoredMessage {
  id: string;
  role: string;
  parts: Array<Record<string, unknown> & { type: string }>;
  traceId?: string;
}

let h: TurnsHarness | undefined;
let agentId = "";
let conversationId = "";

beforeAll(async () => {
  h = await startTurnsHarness();
  if (h !== undefined) agentId = await h.readyAgent("helper", { tags: { team: "search" } });
}, 180_000);
afterAll(async () => {
  await h?.stop();
});

const writeFile = {
  toolCalls: [
    {
      id: "call_write",
      name: "write_file",
      arguments: JSON.stringify({ path: "notes/hello.txt", content: "hello from the agent\n" }),
    },
  ],
};
const runCommand = (command: string, id = "call_run") => ({
  toolCalls: [{ id, name: "run_command", arguments: JSON.stringify({ command }) }],
});

async function conversation(
  id: string,
): Promise<{ messages: StoredMessage[] } & Record<string, unknown>> {
  const response = await (h as TurnsHarness).t.call(
    "GET",
    `/v1/agents/${agentId}/conversations/${id}`,
  );
  expect(response.status).toBe(200);
  return response.json();
}

describe("a turn", () => {
  it("streams the reply in order, stores the conversation and traces it", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps, model } = h as TurnsHarness;
    steps.push(writeFile, runCommand("cat notes/hello.txt; echo warned >&2; exit 3"), {
      text: "I wrote notes/hello.txt and read it back.",
    });
    const reply = await sendMessage(t, agentId, { content: "Write a note and run it" });
    expect(reply.response.status).toBe(200);
    expect(reply.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await reply.end();
    expect(reply.done).toBe(true);
    expect(partTypes(reply.parts)).toEqual([
      "start",
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    const start = reply.parts[0] as unknown as {
      messageId: string;
      messageMetadata: { conversationId: string; traceId: string };
    };
    conversationId = start.messageMetadata.conversationId;
    expect(reply.response.headers.get("x-cairn-conversation-id")).toBe(conversationId);
    const tools = reply.parts.filter((part) => part.type.startsWith("tool-"));
    expect(tools[0]).toMatchObject({ toolName: "write_file", input: { path: "notes/hello.txt" } });
    expect(tools[2]).toMatchObject({ toolName: "run_command", toolCallId: "call_run" });
    expect(tools[3]).toMatchObject({
      output: { exitCode: 3, stdout: "hello from the agent\n", stderr: "warned\n" },
    });
    const text = reply.parts
      .filter((part) => part.type === "text-delta")
      .map((part) => part.delta)
      .join("");
    expect(text).toBe("I wrote notes/hello.txt and read it back.");
    // The model was asked with the user's message last, and the tools.
    const first = model.requests.at(-3)?.body as {
      messages: Array<{ role: string; content: unknown }>;
      tools: unknown[];
    };
    expect(first.messages.at(-1)).toEqual({ role: "user", content: "Write a note and run it" });

    // Stored and listed.
    const listed = (await (await t.call("GET", `/v1/agents/${agentId}/conversations`)).json()) as {
      conversations: Array<{ id: string; title: string; messageCount: number }>;
    };
    expect(listed.conversations).toContainEqual(
      expect.objectContaining({
        id: conversationId,
        title: "Write a note and run it",
        messageCount: 2,
      }),
    );
    const stored = await conversation(conversationId);
    expect(stored.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    const assistant = stored.messages[1] as StoredMessage;
    expect(assistant.id).toBe(start.messageId);
    expect(assistant.traceId).toBe(start.messageMetadata.traceId);
    expect(assistant.parts.map((part) => part.type)).toEqual([
      "step-start",
      "dynamic-tool",
      "step-start",
      "dynamic-tool",
      "step-start",
      "text",
    ]);
    expect(assistant.parts[3]).toMatchObject({
      toolName: "run_command",
      state: "output-available",
      output: { exitCode: 3 },
    });

    // The trace: agent → llm ×3, tool ×2, and the exec under run_command.
    const trace = (await (
      await t.call("GET", `/traces/${assistant.traceId}?payloads=true`)
    ).json()) as {
      spans: SpanNode[];
    };
    expect(trace.spans).toHaveLength(1);
    const root = trace.spans[0] as SpanNode;
    expect(root).toMatchObject({
      kind: "agent",
      name: "helper",
      session_id: conversationId,
      input: "Write a note and run it",
      output: "I wrote notes/hello.txt and read it back.",
      status: "ok",
    });
    expect(root.tags).toEqual(expect.arrayContaining(["agent:helper", "team=search"]));
    const llm = root.children.filter((span) => span.kind === "llm");
    expect(llm).toHaveLength(3);
    for (const span of llm) {
      expect(span.name).toBe("chat gpt-4o-mini");
      expect(span.model).toBe("gpt-4o-mini");
      expect(span.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 });
      expect(span.cost_usd).toBeGreaterThan(0);
    }
    const toolSpans = root.children.filter((span) => span.kind === "tool");
    expect(toolSpans.map((span) => span.name)).toEqual(["write_file", "run_command"]);
    const run = toolSpans[1] as SpanNode;
    expect(run.attributes["process.exit.code"]).toBe(3);
    expect(JSON.parse(run.output ?? "null")).toMatchObject({ exitCode: 3 });
    expect(run.children).toHaveLength(1);
    const exec = run.children[0] as SpanNode;
    expect(exec.attributes).toMatchObject({ "tool.name": "sandbox.exec", "process.exit.code": 3 });
    expect(exec.attributes["cairn.sandbox.exec_id"]).toMatch(/^ex_/);
  });

  it("marks the cost of a model the price table does not know, rather than $0", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps } = h as TurnsHarness;
    const local = await (h as TurnsHarness).readyAgent("local", { model: "llama3.2" });
    steps.push({ text: "Hello from a local model." });
    const reply = await sendMessage(t, local, { content: "Hello?" });
    await reply.end();
    const { traceId } = (reply.parts[0] as unknown as { messageMetadata: { traceId: string } })
      .messageMetadata;
    const trace = (await (await t.call("GET", `/traces/${traceId}`)).json()) as {
      spans: SpanNode[];
    };
    const llm = trace.spans[0]?.children.find((span) => span.kind === "llm") as SpanNode;
    expect(llm).toMatchObject({ name: "chat llama3.2", model: "llama3.2", cost_usd: null });
    expect(llm.attributes).toMatchObject({
      "cairn.cost.unavailable": "unknown_model:llama3.2",
      "gen_ai.operation.name": "chat",
    });
    // As `cairn traces show` prints it: the call named once, its cost unknown, not $0.
    const flatten = (spans: SpanNode[]): SpanNode[] =>
      spans.flatMap(({ children, ...span }) => [{ ...span, children: [] }, ...flatten(children)]);
    const tree = formatTraceTree(flatten(trace.spans) as unknown as ExportedSpan[]);
    expect(tree).toMatch(
      /llm chat llama3\.2 .* llama3\.2 .* cost unknown \(unknown_model:llama3\.2\)/,
    );
    expect(tree).not.toMatch(/llm llm|\$0\b/);
  });

  it("sends the conversation's history with the next message", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    expect(conversationId).not.toBe("");
    const { t, steps, model } = h as TurnsHarness;
    steps.push({ text: "It says hello." });
    const reply = await sendMessage(t, agentId, {
      conversationId,
      content: "What did the note say?",
    });
    await reply.end();
    expect(reply.parts.at(-1)?.type).toBe("finish");
    const sent = model.requests.at(-1)?.body as {
      messages: Array<{
        role: string;
        content: unknown;
        tool_calls?: unknown[];
        tool_call_id?: string;
      }>;
    };
    expect(sent.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    expect(sent.messages[0]?.content).toBe("You are a careful helper.");
    expect(sent.messages[2]?.tool_calls).toHaveLength(1);
    expect(sent.messages[5]).toMatchObject({ tool_call_id: "call_run" });
    expect(String(sent.messages[5]?.content)).toContain("hello from the agent");
    expect(sent.messages[6]?.content).toBe("I wrote notes/hello.txt and read it back.");
    expect(sent.messages[7]?.content).toBe("What did the note say?");
    expect((await conversation(conversationId)).messages).toHaveLength(4);
  });

  it("runs one at a time per conversation, and stop ends it", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps, model } = h as TurnsHarness;
    steps.push(runCommand("touch sleeping; sleep 60", "call_sleep"), { text: "after the stop" });
    const reply = await sendMessage(t, agentId, { conversationId, content: "Sleep a minute" });
    await reply.until("tool-input-available");
    await fileAppears("sleeping");
    const asked = model.requests.length;
    const second = await t.call("POST", `/v1/agents/${agentId}/messages`, {
      conversationId,
      content: "Are you there?",
    });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: "conflict" });
    const stop = await t.call("POST", `/v1/agents/${agentId}/conversations/${conversationId}/stop`);
    expect(await stop.json()).toEqual({ stopped: true });
    await reply.end();
    expect(reply.done).toBe(true);
    expect(partTypes(reply.parts).slice(-2)).toEqual(["data-turn-error", "abort"]);
    expect(reply.parts.at(-2)).toMatchObject({ data: { kind: "aborted" } });
    // Nothing more was asked of the model; the command was killed.
    expect(model.requests.length).toBe(asked);
    const stored = await conversation(conversationId);
    const last = stored.messages.at(-1) as StoredMessage;
    expect(last.role).toBe("assistant");
    expect(last.parts.at(-1)).toMatchObject({ type: "data-turn-error", data: { kind: "aborted" } });
    await expectCommandKilled("sleep 60");
    // Stopped, the conversation takes the next message (the step queued is still there).
    const again = await sendMessage(t, agentId, { conversationId, content: "Go on" });
    await again.end();
    expect(again.parts.at(-1)?.type).toBe("finish");
    expect(
      await t
        .call("POST", `/v1/agents/${agentId}/conversations/${conversationId}/stop`)
        .then((r) => r.json()),
    ).toEqual({
      stopped: false,
    });
  });

  it("is aborted when the client goes away", { timeout: 120_000 }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps, model } = h as TurnsHarness;
    steps.push(runCommand("touch waiting; sleep 61; echo late > late.txt", "call_late"));
    const client = new AbortController();
    const reply = await sendMessage(t, agentId, { content: "Take your time" }, client.signal);
    await reply.until("tool-input-available");
    await fileAppears("waiting");
    const cid = (reply.parts[0] as unknown as { messageMetadata: { conversationId: string } })
      .messageMetadata.conversationId;
    const asked = model.requests.length;
    client.abort();
    await expect
      .poll(async () => (await conversation(cid)).messages.length, { timeout: 30_000 })
      .toBe(2);
    const stored = await conversation(cid);
    expect(stored.messages[1]?.parts.at(-1)).toMatchObject({
      type: "data-turn-error",
      data: { kind: "aborted" },
    });
    // The tool call shown is kept, its command killed with the turn.
    expect(stored.messages[1]?.parts).toContainEqual(
      expect.objectContaining({
        type: "dynamic-tool",
        toolCallId: "call_late",
        state: "output-error",
        errorText: "the command was killed: the turn was stopped",
      }),
    );
    await expectCommandKilled("sleep 61");
    expect(model.requests.length).toBe(asked);
  });

  it("waits while the agent answers in another conversation", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps } = h as TurnsHarness;
    steps.push(runCommand("touch busy; sleep 62", "call_busy"), { text: "My turn now." });
    const first = await sendMessage(t, agentId, { content: "Keep busy" });
    await first.until("tool-input-available");
    await fileAppears("busy");
    // The core runs one turn at a time: the other conversation's reply starts and waits.
    const second = await sendMessage(t, agentId, { content: "Answer me too" });
    expect(second.response.status).toBe(200);
    await second.until("start");
    const busy = (first.parts[0] as unknown as { messageMetadata: { conversationId: string } })
      .messageMetadata.conversationId;
    await t.call("POST", `/v1/agents/${agentId}/conversations/${busy}/stop`);
    await first.end();
    expect(first.parts.at(-1)?.type).toBe("abort");
    await second.end();
    expect(second.parts.at(-1)?.type).toBe("finish");
    expect(
      second.parts
        .filter((part) => part.type === "text-delta")
        .map((part) => part.delta)
        .join(""),
    ).toBe("My turn now.");
  });
});

describe("a turn that fails", () => {
  it("says upstream_4xx when the model refuses the key", { timeout: 60_000 }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps } = h as TurnsHarness;
    steps.push({ status: 401 });
    const reply = await sendMessage(t, agentId, { content: "Hello?" });
    await reply.end();
    expect(reply.done).toBe(true);
    expect(partTypes(reply.parts).slice(-2)).toEqual(["data-turn-error", "error"]);
    expect(reply.parts.at(-2)).toMatchObject({ data: { kind: "upstream_4xx", status: 401 } });
    expect(String(reply.parts.at(-1)?.errorText)).toMatch(/401/);
  });

  it("says transient when the model fails with a 5xx", { timeout: 60_000 }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps } = h as TurnsHarness;
    steps.push({ status: 503, retryAfterMs: null });
    const reply = await sendMessage(t, agentId, { content: "Hello again?" });
    await reply.end();
    expect(reply.parts.at(-2)).toMatchObject({ data: { kind: "transient", status: 503 } });
    expect(reply.parts.at(-1)?.type).toBe("error");
    const cid = (reply.parts[0] as unknown as { messageMetadata: { conversationId: string } })
      .messageMetadata.conversationId;
    const stored = await conversation(cid);
    expect(stored.messages[1]?.parts.at(-1)).toMatchObject({ data: { kind: "transient" } });
  });

  it("says transient when the model cannot be reached", { timeout: 180_000 }, async (context) => {
    needSandboxes(context, h?.t);
    const { t } = h as TurnsHarness;
    const offline = await (h as TurnsHarness).readyAgent("offline", { offline: true });
    const reply = await sendMessage(t, offline, { content: "Anyone?" });
    await reply.end();
    expect(reply.parts.at(-2)).toMatchObject({
      type: "data-turn-error",
      data: { kind: "transient" },
    });
    expect(reply.parts.at(-1)?.type).toBe("error");
    // Stopped, the agent takes no message.
    await t.call("POST", `/v1/agents/${offline}/stop`);
    const refused = await t.call("POST", `/v1/agents/${offline}/messages`, {
      content: "Still there?",
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "agent_not_ready" });
  });
});

describe("a turn the egress proxy refuses", () => {
  it("says other, naming the proxy and what to check, and logs it", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, model } = h as TurnsHarness;
    const asked = model.requests.length;
    // A typo of the name egress.hosts gives: the proxy cannot resolve it; no model answers.
    const created = await createAgent(t, {
      name: "typo",
      model: { baseURL: "http://model.tset.internal/v1", model: "gpt-4o-mini" },
    });
    const typo = (await waitUntilReady(t, created.id)).id;
    const reply = await sendMessage(t, typo, { content: "Hello?" });
    await reply.end();
    const refusal =
      "the sandbox's egress proxy refused the request to model.tset.internal: model.tset.internal does not resolve (ENOTFOUND). Is the model's host named with --egress-host, or on the secret store's allowlist?";
    expect(reply.parts.at(-2)).toEqual({
      type: "data-turn-error",
      data: { kind: "other", message: refusal },
    });
    expect(reply.parts.at(-1)).toMatchObject({ type: "error", errorText: refusal });
    expect(await agentLog(t, typo)).toContain(`stderr: agent-core: turn `);
    expect(await agentLog(t, typo)).toContain(refusal);
    expect(model.requests.length).toBe(asked);
  });
});

describe("the model key", () => {
  it("appears in no reply, stored message, span, or anywhere in the sandbox", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, h?.t);
    const { t, steps, model } = h as TurnsHarness;
    // A model that echoes the Authorization header it got: as text, and as a command to run.
    const echoed: string[] = [];
    steps.push(
      (request) => {
        const authorization = String(request.headers.authorization);
        echoed.push(authorization);
        return {
          text: `You sent ${authorization}.`,
          toolCalls: [
            {
              id: "call_echo",
              name: "run_command",
              arguments: JSON.stringify({
                command: `echo '${authorization}' > echoed.txt; echo '${authorization}'`,
              }),
            },
          ],
        };
      },
      (request) => ({ text: `Again: ${request.headers.authorization}` }),
    );
    const reply = await sendMessage(t, agentId, { content: "What is your key?" });
    await reply.end();
    expect(reply.parts.at(-1)?.type).toBe("finish");
    // The proxy put the key in the request, so the model had it to echo back.
    expect(echoed).toEqual([`Bearer ${modelKey}`]);
    expect(model.requests.at(-1)?.headers.authorization).toBe(`Bearer ${modelKey}`);
    const forms = [modelKey, Buffer.from(modelKey).toString("base64")];
    const notThere = (text: string, where: string) => {
      for (const form of forms) expect(text.includes(form), where).toBe(false);
    };
    notThere(reply.raw, "the stream");
    // The model streamed the key in pieces (the proxy cannot see it whole): the reply's text,
    // joined, has the placeholder instead.
    const text = reply.parts
      .filter((part) => part.type === "text-delta")
      .map((part) => part.delta)
      .join("");
    expect(text).toMatch(/^You sent Bearer cairn_sealed_[0-9a-f]{32}\.Again: Bearer cairn_sealed_/);
    notThere(text, "the reply's text");
    const cid = (
      reply.parts[0] as unknown as { messageMetadata: { conversationId: string; traceId: string } }
    ).messageMetadata;
    const stored = await conversation(cid.conversationId);
    expect(JSON.stringify(stored)).toContain("echoed.txt");
    notThere(JSON.stringify(stored), "the stored conversation");
    const trace = await (await t.call("GET", `/traces/${cid.traceId}?payloads=true`)).text();
    expect(trace).toContain("echoed.txt");
    notThere(trace, "the trace");
    const agent = (await (await t.call("GET", `/v1/agents/${agentId}`)).json()) as {
      sandboxId: string;
    };
    notThere(JSON.stringify(agent), "the agent's record");
    notThere(await (await t.call("GET", `/v1/agents/${agentId}/logs`)).text(), "the agent's logs");
    // Everything a process in the agent's sandbox can read.
    const look = [
      "cat /workspace/echoed.txt",
      "env",
      "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null",
      "grep -rs . /etc /workspace /tmp /opt/cairn 2>/dev/null | head -c 4000000",
    ].join("; echo ---; ");
    const sandbox = await Sandbox.connect(agent.sandboxId, {
      endpoint: t.server.url,
      apiKey: t.apiKey,
    });
    const seen = await sandbox.run("sh", { args: ["-c", look] });
    expect(seen.stdout).toContain("CAIRN_SECRET_MODEL_KEY=cairn_sealed_");
    expect(seen.stdout).toContain("Bearer ");
    notThere(seen.stdout, "the sandbox");
  });
});

describe("a message the service refuses", () => {
  it("is a 400 or 404 naming the problem, and stores nothing", async (context) => {
    needSandboxes(context, h?.t);
    const { t } = h as TurnsHarness;
    const before = (await (await t.call("GET", `/v1/agents/${agentId}/conversations`)).json()) as {
      conversations: unknown[];
    };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ content: "" }, 400, /content is empty/],
      [{ content: "x".repeat(32 * 1024 + 1) }, 400, /over 32 KiB/],
      [{ content: "hi", conversationId: "nope" }, 400, /conv_/],
      [{ content: "hi", conversationId: "conv_000000000000000000000000" }, 404, /no conversation/],
      [{ content: "hi", extra: 1 }, 400, /extra/],
      [
        {
          content: "hi",
          attachments: [{ name: "a", mediaType: "image/png", url: "file:///etc/passwd" }],
        },
        400,
        /url/,
      ],
    ];
    for (const [body, status, message] of cases) {
      const response = await t.call("POST", `/v1/agents/${agentId}/messages`, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect((await response.json()).message).toMatch(message);
    }
    const unknown = await t.call("POST", "/v1/agents/agt_000000000000000000000000/messages", {
      content: "hi",
    });
    expect(unknown.status).toBe(404);
    const after = (await (await t.call("GET", `/v1/agents/${agentId}/conversations`)).json()) as {
      conversations: unknown[];
    };
    expect(after.conversations).toHaveLength(before.conversations.length);
    const missing = await t.call(
      "GET",
      `/v1/agents/${agentId}/conversations/conv_000000000000000000000000`,
    );
    expect(missing.status).toBe(404);
  });
});

async function sandboxOfAgent(): Promise<string> {
  const { t } = h as TurnsHarness;
  return ((await (await t.call("GET", `/v1/agents/${agentId}`)).json()) as { sandboxId: string })
    .sandboxId;
}

/** Waits for a file in the agent's workspace: a command has started. */
async function fileAppears(name: string): Promise<void> {
  const { t } = h as TurnsHarness;
  const sandboxId = await sandboxOfAgent();
  await expect
    .poll(
      async () =>
        (await t.call("GET", `/api/sandboxes/${sandboxId}/files/stat?path=/workspace/${name}`))
          .status,
      { timeout: 30_000 },
    )
    .toBe(200);
}

/** The run_command exec of `command` in the agent's sandbox ended killed. */
async function expectCommandKilled(command: string): Promise<void> {
  const { t } = h as TurnsHarness;
  const sandboxId = await sandboxOfAgent();
  await expect
    .poll(
      async () => {
        const { execs } = (await (
          await t.call("GET", `/api/sandboxes/${sandboxId}/exec`)
        ).json()) as {
          execs: Array<{ args: string[]; state: string }>;
        };
        return execs.find((exec) => exec.args.join(" ").includes(command))?.state;
      },
      { timeout: 30_000 },
    )
    .toBe("killed");
}

describe("the API reference", () => {
  it("documents the message and conversation routes, with both 409s", async () => {
    const t = await startTestServer();
    try {
      const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
      const message = document.paths["/v1/agents/{id}/messages"].post;
      expect(Object.keys(message.responses["200"].content)).toEqual(["text/event-stream"]);
      expect(message.responses["409"].description).toMatch(/conflict.*agent_not_ready/);
      expect(message.requestBody.content["application/json"].schema.required).toEqual(["content"]);
      for (const path of [
        "/v1/agents/{id}/conversations",
        "/v1/agents/{id}/conversations/{cid}",
        "/v1/agents/{id}/conversations/{cid}/stop",
      ]) {
        expect(document.paths[path], path).toBeDefined();
      }
    } finally {
      await t.stop();
    }
  });
});
