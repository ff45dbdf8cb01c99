import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { Profiler, type ReactNode, useState } from "react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { frames as makeFrames, pushTransport } from "../../../test/helpers/chat-fakes.js";
import { CairnChat } from "./cairn-chat.js";
import { ChatStore } from "./chat-store.js";
import type { ExecFollower } from "./exec-output.js";
import type { ChatMessage, ChatStreamPart } from "./types.js";
import { useChat, useChatMessage } from "./use-chat.js";

/** happy-dom lays nothing out: the thread is given a size, so the virtualizer shows rows. */
function layOutThread() {
  for (const [name, size] of [
    ["clientHeight", 400],
    ["clientWidth", 600],
  ] as const) {
    vi.spyOn(HTMLElement.prototype, name, "get").mockImplementation(function (this: HTMLElement) {
      return this.classList.contains("cairn-chat-thread") ? size : 0;
    });
  }
}

beforeEach(layOutThread);
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

/** Frames the test runs by hand, each inside act(). */
const frames = () => makeFrames((callback) => act(callback));

/** A whole text block, then the finish. */
function textOf(text: string): ChatStreamPart[] {
  return [
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish" },
  ];
}

const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

const history: ChatMessage[] = [
  { id: "u1", role: "user", parts: [{ type: "text", text: "Earlier question" }] },
  { id: "a1", role: "assistant", parts: [{ type: "text", text: "Earlier answer", state: "done" }] },
];

describe("useChat", () => {
  it("renders a frame's many chunks once, and only the message that changed", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({
      transport: fake.transport,
      schedule: clock.schedule,
      initialMessages: history,
    });
    const renders = new Map<string, number>();
    let listRenders = 0;
    function Message({ id }: { readonly id: string }) {
      const message = useChatMessage(store, id);
      renders.set(id, (renders.get(id) ?? 0) + 1);
      const text = message?.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
      return <p data-testid={id}>{text}</p>;
    }
    function List() {
      const chat = useChat({ store });
      listRenders++;
      return (
        <>
          {chat.messageIds.map((id) => (
            <Message key={id} id={id} />
          ))}
        </>
      );
    }
    render(<List />);
    act(() => void store.sendMessage("Stream please"));
    fake.push({ type: "start", messageId: "a2" }, { type: "text-start", id: "t" });
    await settle();
    clock.run();
    const before = { list: listRenders, a1: renders.get("a1"), a2: renders.get("a2") ?? 0 };

    for (let index = 0; index < 100; index++) {
      fake.push({ type: "text-delta", id: "t", delta: `${index} ` });
    }
    await settle();
    expect(renders.get("a2") ?? 0).toBe(before.a2); // nothing before the frame
    clock.run();
    expect(renders.get("a2")).toBe(before.a2 + 1);
    expect(renders.get("a1")).toBe(before.a1);
    expect(listRenders).toBe(before.list);
    expect(screen.getByTestId("a2").textContent).toContain("99 ");

    fake.push({ type: "finish" }, "end");
    await settle();
    expect(store.getStatus()).toBe("idle");
  });
});

/** CairnChat on a store the test drives, with the React commits it makes counted. */
function renderChat(store: ChatStore, children?: ReactNode) {
  let commits = 0;
  const view = render(
    <Profiler id="chat" onRender={() => commits++}>
      <CairnChat store={store} style={{ height: 400 }} />
      {children}
    </Profiler>,
  );
  return { ...view, commits: () => commits };
}

describe("CairnChat", () => {
  it("sends on Enter, adds a line on Shift+Enter, stops on Escape", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({ transport: fake.transport, schedule: clock.schedule });
    renderChat(store);
    const box = screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "first line" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(fake.signals).toHaveLength(0);
    fireEvent.change(box, { target: { value: "first line\nsecond line" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await settle();
    clock.run();
    expect(fake.signals).toHaveLength(1);
    expect(store.getMessages()[0]?.parts).toEqual([
      { type: "text", text: "first line\nsecond line" },
    ]);
    expect(box.value).toBe("");
    expect(screen.getByRole("log").getAttribute("aria-busy")).toBe("true");

    fake.push({ type: "start", messageId: "a" }, { type: "text-start", id: "t" });
    fake.push({ type: "text-delta", id: "t", delta: "Partial" });
    await settle();
    clock.run();
    fireEvent.keyDown(box, { key: "Escape" });
    expect(fake.signals[0]?.aborted).toBe(true);
    expect(store.getStatus()).toBe("stopped");
    expect(screen.getByRole("log").getAttribute("aria-busy")).toBe("false");
    expect(document.querySelector(".cairn-chat-notice")?.textContent).toBe("Stopped.");
    expect(screen.getByRole("log").textContent).toContain("Partial");
  });

  it("announces each answer once, when it completes, and not while it streams", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({ transport: fake.transport, schedule: clock.schedule });
    renderChat(store);
    const status = screen.getByRole("status");
    const seen: string[] = [];
    const observer = new MutationObserver(() => {
      const text = status.textContent ?? "";
      if (text !== "" && seen.at(-1) !== text) seen.push(text);
    });
    observer.observe(status, { subtree: true, childList: true, characterData: true });

    for (const [turn, words] of [
      ["one", ["Hello ", "there, ", "friend."]],
      ["two", ["Second ", "answer."]],
    ] as const) {
      act(() => void store.sendMessage(`question ${turn}`));
      fake.push({ type: "start", messageId: `a-${turn}` }, { type: "text-start", id: "t" });
      for (const word of words) {
        fake.push({ type: "text-delta", id: "t", delta: word });
        await settle();
        clock.run();
      }
      expect(status.textContent).toBe(turn === "one" ? "" : "Assistant: Hello there, friend.");
      fake.push({ type: "text-end", id: "t" }, { type: "finish" }, "end");
      await settle();
    }
    await waitFor(() => expect(seen).toHaveLength(2));
    observer.disconnect();
    expect(seen).toEqual(["Assistant: Hello there, friend.", "Assistant: Second answer."]);
  });

  it("makes at most one React commit per frame while an answer streams", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({
      transport: fake.transport,
      schedule: clock.schedule,
      initialMessages: history,
    });
    const view = renderChat(store);
    act(() => void store.sendMessage("Go"));
    fake.push({ type: "start", messageId: "a2" }, { type: "text-start", id: "t" });
    await settle();
    clock.run();
    await settle();
    const before = view.commits();
    for (let frame = 0; frame < 10; frame++) {
      for (let chunk = 0; chunk < 20; chunk++) {
        fake.push({ type: "text-delta", id: "t", delta: "token " });
      }
      await settle();
      clock.run();
    }
    expect(view.commits() - before).toBeLessThanOrEqual(10);
    expect(screen.getByRole("log").textContent).toContain("token token");
    fake.push({ type: "finish" }, "end");
    await settle();
  });

  it("shows an error with Retry after a dropped connection, and retries", async () => {
    const clock = frames();
    const fake = pushTransport();
    const store = new ChatStore({ transport: fake.transport, schedule: clock.schedule });
    renderChat(store);
    act(() => void store.sendMessage("hi"));
    fake.push({ type: "start", messageId: "a" }, "end");
    await settle();
    const retry = screen.getByRole("button", { name: "Retry" });
    expect(screen.getByRole("status").textContent).toMatch(/^Error: The connection dropped/);
    fireEvent.click(retry);
    fake.push({ type: "start", messageId: "b" }, { type: "finish" }, "end");
    await settle();
    clock.run();
    expect(store.getStatus()).toBe("idle");
    expect(fake.signals).toHaveLength(2);
    expect(screen.queryByRole("button", { name: "Retry" })).toBeNull();
  });

  it("streams a sandbox exec's output into its card, or shows the output it returned", async () => {
    const execPart = (execId: string, output: Record<string, unknown>): ChatMessage => ({
      id: `a-${execId}`,
      role: "assistant",
      parts: [
        {
          type: "dynamic-tool",
          toolCallId: `call-${execId}`,
          toolName: "sandbox.exec",
          state: "output-available",
          input: { cmd: "ls", args: ["-la"] },
          output: { sandboxId: "sbx", execId, ...output },
        },
      ],
    });
    const emit: Record<string, Parameters<ExecFollower>[1]> = {};
    const followed: string[] = [];
    const follower: ExecFollower = (target, handlers) => {
      followed.push(`${target.sandboxId}/${target.execId}`);
      emit[target.execId] = handlers;
      return () => undefined;
    };
    render(
      <CairnChat
        transport={pushTransport().transport}
        followExec={follower}
        initialMessages={[
          execPart("live", {}),
          execPart("gone", { exitCode: 2, stdout: "kept\n" }),
        ]}
      />,
    );
    await settle();
    expect(followed).toEqual(["sbx/live", "sbx/gone"]);
    const [live, gone] = [...document.querySelectorAll("details.cairn-chat-exec")] as HTMLElement[];
    expect(live?.textContent).toContain("$ ls -la");
    expect(live?.textContent).toContain("Running");
    act(() => emit.live?.onOutput?.(1, "a.txt\n"));
    act(() => emit.live?.onOutput?.(2, "b.txt\n"));
    act(() => emit.live?.onExit?.({ exitCode: 0, signal: null }));
    expect(live?.querySelector("pre")?.textContent).toBe("a.txt\nb.txt\n");
    expect(live?.textContent).toContain("Exit 0");
    act(() => emit.gone?.onError?.("no exec gone"));
    expect(gone?.querySelector("pre")?.textContent).toBe("kept\n");
    expect(gone?.textContent).toContain("Exit 2");
    expect(gone?.textContent).not.toContain("no exec gone");
  });

  it("shows a managed agent's run_command as a command card, with the output it returned", async () => {
    const followed: string[] = [];
    render(
      <CairnChat
        transport={pushTransport().transport}
        followExec={(target) => {
          followed.push(target.execId);
          return () => undefined;
        }}
        initialMessages={[
          {
            id: "a-agent",
            role: "assistant",
            parts: [
              {
                type: "dynamic-tool",
                toolCallId: "call-agent",
                toolName: "run_command",
                state: "output-available",
                input: { command: "ls /workspace" },
                output: { exitCode: 1, stdout: "notes.txt\n", stderr: "" },
              },
            ],
          },
        ]}
      />,
    );
    await settle();
    const card = document.querySelector("details.cairn-chat-exec") as HTMLDetailsElement;
    expect(card.open).toBe(true);
    expect(card.textContent).toContain("$ ls /workspace");
    expect(card.querySelector("pre")?.textContent).toBe("notes.txt\n");
    expect(card.textContent).toContain("Exit 1");
    expect(followed).toEqual([]);
  });

  it("works controlled: the parent holds the messages and can replace them", async () => {
    const fake = pushTransport();
    let latest: readonly ChatMessage[] = [];
    let replace: (messages: readonly ChatMessage[]) => void = () => undefined;
    function Parent() {
      const [messages, setMessages] = useState<readonly ChatMessage[]>(history);
      latest = messages;
      replace = setMessages;
      return (
        <CairnChat transport={fake.transport} messages={messages} onMessagesChange={setMessages} />
      );
    }
    render(<Parent />);
    expect(screen.getByRole("log").textContent).toContain("Earlier answer");
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "Next" } });
    fireEvent.keyDown(box, { key: "Enter" });
    fake.push({ type: "start", messageId: "a2" }, ...textOf("Controlled answer"), "end");
    await waitFor(() => expect(latest.map((message) => message.id)).toContain("a2"));
    expect(latest).toHaveLength(4);
    act(() => replace([]));
    await settle();
    expect(screen.getByText("Ask anything to start.")).toBeTruthy();
  });

  it("refuses an attachment over its limit, naming the file and the limit", async () => {
    const { transport } = pushTransport();
    const view = renderChat(new ChatStore({ transport }));
    const input = view.container.querySelector('input[type="file"]') as HTMLInputElement;
    const big = new File([new Uint8Array(6_000_001)], "dump.bin");
    const small = new File(["hi"], "note.txt", { type: "text/plain" });
    fireEvent.change(input, { target: { files: [big, small] } });
    expect((await screen.findByRole("alert")).textContent).toContain(
      "dump.bin: over the 5 MB an attachment may have",
    );
    await waitFor(() => expect(view.container.textContent).toContain("note.txt"));
    expect(view.container.querySelectorAll(".cairn-chat-attachment")).toHaveLength(1);
  });

  it("renders on the server and hydrates without a warning", async () => {
    const transport = pushTransport().transport;
    const messages: ChatMessage[] = [
      ...history,
      {
        id: "a2",
        role: "assistant",
        parts: [
          { type: "text", text: "Some `code`:\n\n```ts\nconst a = 1;\n```", state: "done" },
          {
            type: "dynamic-tool",
            toolCallId: "c",
            toolName: "sandbox.exec",
            state: "output-available",
            input: { command: "ls" },
            output: { exitCode: 0, stdout: "a.txt\n" },
          },
        ],
      },
    ];
    const app = () => <CairnChat transport={transport} initialMessages={messages} theme="dark" />;
    const html = renderToString(app());
    expect(html).toContain('role="log"');
    expect(html).toContain("Earlier answer");
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const errors = vi.spyOn(console, "error");
    let root: ReturnType<typeof hydrateRoot> | undefined;
    await act(async () => {
      root = hydrateRoot(container, app());
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    expect(errors).not.toHaveBeenCalled();
    expect(container.textContent).toContain("Earlier answer");
    expect(container.textContent).toContain("$ ls");
    act(() => root?.unmount());
    container.remove();
  });
});
