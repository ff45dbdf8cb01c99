// agentTransport() of cairn-ai/react, driven by the chat's own store as CairnChat drives it, against
// a real service with a real agent: authenticated by a web channel's token, never the project's
// key; only the last user message goes out; the service keeps the conversation.
import { agentTransport, type ChatMessage, ChatStore } from "cairn-ai/react";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentService, needAgents, startAgentService } from "./helpers/agent-service.js";

let service: AgentService | undefined;

beforeAll(async () => {
  service = await startAgentService({
    web: [
      {
        toolCalls: [
          { id: "call-1", name: "run_command", arguments: JSON.stringify({ command: "pwd" }) },
        ],
      },
      { text: "You are in /workspace." },
      { text: "Still there." },
      { text: "A fresh start." },
    ],
    other: [],
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
});

/** Publishes at once (there are no frames in Node). */
function microtask(run: () => void): () => void {
  queueMicrotask(run);
  return () => {};
}

/** Every request the transport makes, with its headers and body. */
function recordingFetch() {
  const requests: { url: string; headers: Record<string, string>; body: unknown }[] = [];
  const fetchFunction: typeof fetch = async (input, init) => {
    requests.push({
      url: String(input),
      headers: { ...(init?.headers as Record<string, string>) },
      body: JSON.parse(String(init?.body)),
    });
    return fetch(input, init);
  };
  return { requests, fetch: fetchFunction };
}

const assistantText = (message: ChatMessage | undefined) =>
  message?.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

describe("agentTransport", { timeout: 120_000 }, () => {
  it("talks to an agent with a web channel's token, continuing the conversation the service keeps", async (context) => {
    needAgents(context, service);
    const { agents, t } = service;
    const agent = await service.readyAgent("web-agent", "web");
    const channel = await agents.channels.add(agent.id, "web", {});
    expect(channel.url).toBe(`${t.server.url}/v1/agents/${agent.id}/messages`);
    const seen: string[] = [];
    const recorder = recordingFetch();
    const transport = agentTransport(agent.id, {
      endpoint: t.server.url,
      token: async () => channel.token,
      onConversationId: (id) => seen.push(id),
      fetch: recorder.fetch,
    });
    const store = new ChatStore({ transport, schedule: microtask });

    await store.sendMessage("Where am I?");
    expect(store.getError()).toBeUndefined();
    const first = store.getMessages()[1];
    expect(assistantText(first)).toBe("You are in /workspace.");
    expect(first?.parts.find((part) => part.type === "dynamic-tool")).toMatchObject({
      toolName: "run_command",
      state: "output-available",
      input: { command: "pwd" },
      output: { exitCode: 0, stdout: "/workspace\n" },
    });
    expect(seen).toEqual([transport.conversationId]);
    expect(transport.conversationId).toMatch(/^conv_[0-9a-f]{24}$/);

    await store.sendMessage("And now?");
    expect(assistantText(store.getMessages()[3])).toBe("Still there.");
    // Only the last message went, with the conversation; the token, never the project key.
    expect(recorder.requests.map((request) => request.body)).toEqual([
      { content: "Where am I?" },
      { content: "And now?", conversationId: transport.conversationId },
    ]);
    for (const request of recorder.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${channel.token}`);
      expect(Object.keys(request.headers).map((name) => name.toLowerCase())).not.toContain(
        "x-api-key",
      );
      expect(JSON.stringify(request)).not.toContain(t.apiKey);
    }
    const conversation = await agents.conversations.get(agent.id, transport.conversationId ?? "");
    expect(conversation.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);

    // A chat cleared of its messages starts a new conversation.
    const before = transport.conversationId;
    store.setMessages([]);
    await store.sendMessage("Start over");
    expect(assistantText(store.getMessages()[1])).toBe("A fresh start.");
    expect(transport.conversationId).not.toBe(before);
    expect(recorder.requests.at(-1)?.body).toEqual({ content: "Start over" });
    expect((await agents.conversations.list(agent.id)).length).toBe(2);
  });

  it("is refused with another agent's token, and with a removed channel's", async (context) => {
    needAgents(context, service);
    const { agents, t } = service;
    const mine = await service.readyAgent("token-owner", "other");
    const theirs = await service.readyAgent("token-target", "other");
    const channel = await agents.channels.add(mine.id, "web", {});
    const elsewhere = new ChatStore({
      transport: agentTransport(theirs.id, { endpoint: t.server.url, token: channel.token }),
      schedule: microtask,
    });
    await elsewhere.sendMessage("hello");
    expect(elsewhere.getStatus()).toBe("error");
    expect(elsewhere.getError()).toMatchObject({ code: "http_error", status: 403 });
    expect(elsewhere.getError()?.message).toContain(`not for ${theirs.id}`);

    await agents.channels.remove(mine.id, channel.channel.id);
    const removed = new ChatStore({
      transport: agentTransport(mine.id, { endpoint: t.server.url, token: channel.token }),
      schedule: microtask,
    });
    await removed.sendMessage("hello");
    expect(removed.getError()).toMatchObject({ code: "http_error", status: 401 });
    // Neither reached the model, whose script is empty: a turn would have failed with its 500.
    expect(service.models.other?.requests).toEqual([]);
  });
});
