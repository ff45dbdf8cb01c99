import { describe, expect, it } from "vitest";
import { frames, pushTransport } from "../../../test/helpers/chat-fakes.js";
import { ChatStore } from "./chat-store.js";
import type { ChatMessage, ChatTurnTrace } from "./types.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function textOf(message: ChatMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
}

describe("ChatStore", () => {
  it("publishes many parts of one frame as one change of the streaming message only", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({
      transport: fake.transport,
      schedule: clock.schedule,
      initialMessages: [{ id: "old", role: "user", parts: [{ type: "text", text: "earlier" }] }],
    });
    const done = store.sendMessage("hello");
    fake.push({ type: "start", messageId: "a" }, { type: "text-start", id: "t" });
    await tick();
    clock.run();
    const calls = { a: 0, old: 0 };
    store.subscribeMessage("a", () => calls.a++);
    store.subscribeMessage("old", () => calls.old++);
    for (let index = 0; index < 50; index++) {
      fake.push({ type: "text-delta", id: "t", delta: "x" });
    }
    await tick();
    expect(calls.a).toBe(0);
    clock.run();
    expect(calls).toEqual({ a: 1, old: 0 });
    expect(textOf(store.getMessage("a"))).toBe("x".repeat(50));
    fake.push({ type: "finish" }, "end");
    await done;
    expect(store.getStatus()).toBe("idle");
  });

  it("stops at once, aborting the request, even when the transport does not notice", async () => {
    const fake = pushTransport();
    const events: string[] = [];
    const store = new ChatStore({
      transport: fake.transport,
      schedule: frames().schedule,
      onTurn: (): ChatTurnTrace => ({
        llm: () => events.push("llm"),
        end: ({ message }) => events.push(`end:${textOf(message)}`),
        fail: () => events.push("fail"),
      }),
    });
    const done = store.sendMessage("hello");
    fake.push({ type: "start", messageId: "a" }, { type: "text-start", id: "t" });
    fake.push({ type: "text-delta", id: "t", delta: "Half" });
    await tick();
    store.stop();
    expect(fake.requests[0]?.signal.aborted).toBe(true);
    expect(store.getStatus()).toBe("stopped");
    expect(store.getMessage("a")?.parts).toEqual([{ type: "text", text: "Half", state: "done" }]);
    fake.push({ type: "text-delta", id: "t", delta: " more" }, "end");
    await done;
    expect(textOf(store.getMessage("a"))).toBe("Half");
    expect(store.getStatus()).toBe("stopped");
    expect(events).toEqual(["end:Half"]);
  });

  it("regenerates the last answer and resends an edited last user message", async () => {
    const fake = pushTransport();
    const store = new ChatStore({ transport: fake.transport, schedule: frames().schedule });
    const answer = (id: string, text: string) =>
      fake.push(
        { type: "start", messageId: id },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: text },
        { type: "finish" },
        "end",
      );
    const first = store.sendMessage("one");
    answer("a1", "first");
    await first;
    const again = store.regenerate();
    answer("a2", "second");
    await again;
    expect(store.getMessages().map((message) => message.id)).toEqual([
      store.getMessageIds()[0],
      "a2",
    ]);
    const edited = store.editLastUserMessage("uno");
    answer("a3", "third");
    await edited;
    expect(store.getMessages().map(textOf)).toEqual(["uno", "third"]);
    expect(fake.requests.at(-1)?.messages.map(textOf)).toEqual(["uno"]);
  });

  it("calls an end without a finish a dropped connection, and retry asks again", async () => {
    const fake = pushTransport();
    const store = new ChatStore({ transport: fake.transport, schedule: frames().schedule });
    const first = store.sendMessage("hi");
    fake.push({ type: "start", messageId: "a" }, "end");
    await first;
    expect(store.getStatus()).toBe("error");
    expect(store.getError()?.code).toBe("connection_dropped");
    const retried = store.retry();
    fake.push({ type: "start", messageId: "b" }, { type: "finish" }, "end");
    await retried;
    expect(store.getStatus()).toBe("idle");
    expect(store.getMessageIds()).toHaveLength(2);
    expect(store.getMessageIds()[1]).toBe("b");
  });
});
