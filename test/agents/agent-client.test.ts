// The agent client of `cairn-ai/sandbox` against a real service: real sandboxes, the real agent
// core, and local OpenAI-compatible model servers that answer with scripted tool calls.
import {
  Agent,
  AgentNotReadyError,
  type AgentStreamPart,
  AgentTurnError,
  ApiRequestError,
} from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentService,
  modelKeyValue,
  modelStore,
  needAgents,
  startAgentService,
} from "./helpers/agent-service.js";

const runCommand = (id: string, command: string) => ({
  toolCalls: [{ id, name: "run_command", arguments: JSON.stringify({ command }) }],
});

let service: AgentService | undefined;

beforeAll(async () => {
  service = await startAgentService({
    // A command, then a reply; then a second turn of the same conversation.
    tools: [
      runCommand("call-1", "echo written > note.txt && cat note.txt"),
      { text: "I wrote note.txt." },
      { text: "It says written." },
    ],
    // Refuses the key.
    refusing: [{ status: 401 }],
    // Long commands, for stopping turns and refusing a second one while one runs.
    slow: [runCommand("call-slow-1", "sleep 60"), runCommand("call-slow-2", "sleep 60")],
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
});

describe("the Agents client", { timeout: 120_000 }, () => {
  it("creates an agent that becomes ready, and lists, reads, changes, stops, starts and deletes it", async (context) => {
    needAgents(context, service);
    const { agents } = service;
    const created = await agents.create({
      name: "lifecycle",
      model: { baseURL: service.baseURL("tools"), model: "fake-model" },
      secretStore: modelStore,
      tags: { team: "docs" },
    });
    expect(created).toMatchObject({ name: "lifecycle", state: "starting", tags: { team: "docs" } });
    expect(created.id).toMatch(/^agt_/);
    const states: string[] = [];
    const ready = await agents.waitUntilReady(created.id, {
      onRecord: (record) => states.push(record.state),
    });
    expect(ready.state).toBe("ready");
    expect(states.at(-1)).toBe("ready");
    expect(ready.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["run_command", "read_file", "write_file", "list_files"]),
    );
    expect((await agents.list()).map((agent) => agent.id)).toContain(created.id);
    expect(await agents.get(created.id)).toMatchObject({ id: created.id, state: "ready" });
    expect(await agents.update(created.id, { tags: { team: "search" } })).toMatchObject({
      tags: { team: "search" },
    });

    const log = [];
    for await (const line of agents.logs(created.id)) log.push(line);
    expect(log.map((line) => line.line)).toContain("created agent lifecycle");
    expect(log.every((line) => ["stdout", "stderr", "service"].includes(line.stream))).toBe(true);

    expect((await agents.stop(created.id)).state).toBe("stopped");
    expect((await agents.start(created.id)).state).toBe("starting");
    expect((await agents.waitUntilReady(created.id)).state).toBe("ready");
    await agents.delete(created.id);
    const gone = await agents.get(created.id).catch((error: unknown) => error);
    expect(ApiRequestError.isInstance(gone) && gone.status).toBe(404);
  });

  it("refuses a duplicate name with 409 and a bad one with 400, leaving the agents as they were", async (context) => {
    needAgents(context, service);
    const { agents } = service;
    const model = { baseURL: service.baseURL("tools"), model: "fake-model" };
    await agents.create({ name: "taken", model, secretStore: modelStore });
    const before = await agents.list();
    const duplicate = await agents
      .create({ name: "taken", model, secretStore: modelStore })
      .catch((error: unknown) => error);
    expect(ApiRequestError.isInstance(duplicate)).toBe(true);
    expect(duplicate).toMatchObject({ status: 409, code: "conflict" });
    expect((duplicate as Error).message).toContain('"taken"');
    const badName = await agents
      .create({ name: "Not A Name", model, secretStore: modelStore })
      .catch((error: unknown) => error);
    expect(badName).toMatchObject({ status: 400, code: "invalid_request" });
    expect((badName as Error).message).toContain("name");
    expect((await agents.list()).map((agent) => agent.id)).toEqual(before.map((agent) => agent.id));
  });

  it("rejects the wait with the reason when the agent crashes: a package that cannot be installed", async (context) => {
    needAgents(context, service);
    const agent = await Agent.create({
      endpoint: service.t.server.url,
      apiKey: service.t.apiKey,
      name: "no-such-package",
      model: { baseURL: service.baseURL("tools"), model: "fake-model" },
      secretStore: modelStore,
      packages: ["cairn-test-missing-package@1.0.0"],
    });
    const failure = await agent.waitUntilReady().catch((error: unknown) => error);
    expect(AgentNotReadyError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ state: "crashed", agentId: agent.id });
    expect((failure as AgentNotReadyError).lastError).toContain("cairn-test-missing-package");
    expect((failure as Error).message).toContain("cairn-test-missing-package");
    expect(agent.record.state).toBe("crashed");
  });

  it("follows the log until the signal aborts", async (context) => {
    needAgents(context, service);
    const agent = await service.agents.create({
      name: "followed",
      model: { baseURL: service.baseURL("tools"), model: "fake-model" },
      secretStore: modelStore,
    });
    const stop = new AbortController();
    const lines: string[] = [];
    for await (const line of service.agents.logs(agent.id, { follow: true, signal: stop.signal })) {
      lines.push(line.line);
      // Lines keep coming as the agent starts: the core's own, then the service's "ready".
      if (line.stream === "service" && line.line.startsWith("ready")) stop.abort();
    }
    expect(lines[0]).toBe("created agent followed");
    expect(lines.at(-1)).toMatch(/^ready/);
  });
});

describe("a conversation with an agent", { timeout: 120_000 }, () => {
  it("streams a reply with its tool call, continues the conversation, and reads it back", async (context) => {
    needAgents(context, service);
    const agent = await service.readyAgent("writer", "tools");
    const reply = await service.agents.send(agent.id, { content: "Write a note" });
    expect(reply.conversationId).toMatch(/^conv_[0-9a-f]{24}$/);
    const parts: AgentStreamPart[] = [];
    for await (const part of reply) parts.push(part);
    const types = parts.map((part) => part.type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("finish");
    const call = parts.find((part) => part.type === "tool-input-available");
    expect(call).toMatchObject({
      toolName: "run_command",
      input: { command: "echo written > note.txt && cat note.txt" },
    });
    expect(parts.find((part) => part.type === "tool-output-available")).toMatchObject({
      output: { exitCode: 0, stdout: "written\n" },
    });
    const text = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : []));
    expect(text.join("")).toBe("I wrote note.txt.");
    // The reply reads once.
    expect(() => reply[Symbol.asyncIterator]()).toThrow(/read already/);

    const next = await service.agents.send(agent.id, {
      content: "What does it say?",
      conversationId: reply.conversationId,
    });
    const result = await next.result();
    expect(result).toMatchObject({
      conversationId: reply.conversationId,
      text: "It says written.",
      toolCalls: [],
    });
    expect(result.traceId).toMatch(/^tr_[0-9a-f]{32}$/);

    const conversations = await service.agents.conversations.list(agent.id);
    expect(conversations).toEqual([
      expect.objectContaining({ id: reply.conversationId, messageCount: 4 }),
    ]);
    const stored = await service.agents.conversations.get(agent.id, reply.conversationId);
    expect(stored.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    // The model was called with the key put in by the proxy; no message holds it.
    const model = service.models.tools;
    expect(model?.requests[0]?.headers.authorization).toBe(`Bearer ${modelKeyValue}`);
    expect(JSON.stringify(stored)).not.toContain(modelKeyValue);
  });

  it("throws AgentTurnError of kind upstream_4xx when the model refuses the key", async (context) => {
    needAgents(context, service);
    const agent = await service.readyAgent("refused", "refusing");
    const reply = await service.agents.send(agent.id, { content: "hello" });
    const failure = await reply.text().catch((error: unknown) => error);
    expect(AgentTurnError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({
      kind: "upstream_4xx",
      status: 401,
      conversationId: reply.conversationId,
    });
    expect((failure as Error).message).not.toContain(modelKeyValue);
  });

  it("refuses a second turn in a running conversation with 409, and the signal stops the turn", async (context) => {
    needAgents(context, service);
    const agent = await service.readyAgent("sleeper", "slow");
    const stop = new AbortController();
    const reply = await service.agents.send(agent.id, { content: "sleep", signal: stop.signal });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const part of reply) {
        seen.push(part.type);
        // The command runs: the turn is under way.
        if (part.type === "tool-input-available") break;
      }
    })();
    await reading;
    // Leaving the loop stopped the first turn; a new one in that conversation is taken, and
    // while it runs, a third is refused.
    const second = await sendWhenFree(agent.id, reply.conversationId, stop.signal);
    const conflict = await service.agents
      .send(agent.id, { content: "again", conversationId: reply.conversationId })
      .catch((error: unknown) => error);
    expect(ApiRequestError.isInstance(conflict)).toBe(true);
    expect(conflict).toMatchObject({ status: 409, code: "conflict" });
    stop.abort(new Error("the test stopped it"));
    const stopped = await second.text().catch((error: unknown) => error);
    expect((stopped as Error).message).toBe("the test stopped it");
    expect(seen[0]).toBe("start");
  });
});

/** Sends in the conversation once its last turn has ended (the service ends it on its own). */
async function sendWhenFree(agentId: string, conversationId: string, signal: AbortSignal) {
  const { agents } = service as AgentService;
  for (;;) {
    try {
      return await agents.send(agentId, { content: "sleep again", conversationId, signal });
    } catch (error) {
      if (!(ApiRequestError.isInstance(error) && error.status === 409)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
