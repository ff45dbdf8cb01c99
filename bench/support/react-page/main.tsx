// The React benchmark's page: CairnChat and CairnFileManager with in-memory backends, and the
// scenarios bench/react.ts runs in chromium, exposed on window. Every figure is taken in the
// page with performance.now(), long tasks and animation frames.
import {
  CairnChat,
  CairnFileManager,
  type ChatMessage,
  ChatStore,
  type ChatStreamPart,
  type ChatTransport,
} from "cairn-ai/react";
import "cairn-ai/react/styles.css";
import { Profiler, type ProfilerOnRenderCallback } from "react";
import { createRoot, type Root } from "react-dom/client";

/** Resolves after the next frame has been painted (a task queued from its rAF callback). */
const painted = () =>
  new Promise<number>((resolve) =>
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(undefined);
    }),
  );

let commits = 0;
let frame = 0;
const commitsInFrame = new Map<number, number>();
const onRender: ProfilerOnRenderCallback = () => {
  commits++;
  commitsInFrame.set(frame, (commitsInFrame.get(frame) ?? 0) + 1);
};

function thread(count: number): ChatMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `m${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    parts: [
      {
        type: "text",
        text:
          index % 2 === 0
            ? `Question ${index}: what is in the file?`
            : `Answer ${index}. The file has **${index} lines**, and:\n\n- a list\n- of items\n\nand a paragraph long enough to wrap over a couple of lines in a 600 px wide chat.`,
      },
    ],
  }));
}

/** A transport whose answer is `chunks` text deltas, `perTick` of them per macrotask. */
function burstTransport(chunks: number, perTick: number): ChatTransport {
  return {
    async *send() {
      yield { type: "start" } satisfies ChatStreamPart;
      yield { type: "text-start", id: "t" };
      for (let index = 0; index < chunks; index++) {
        if (index % perTick === 0) await new Promise((resolve) => setTimeout(resolve, 0));
        yield { type: "text-delta", id: "t", delta: `word${index} ` };
      }
      yield { type: "text-end", id: "t" };
      yield { type: "finish" };
    },
  };
}

let root: Root | undefined;
const container = document.getElementById("root") as HTMLElement;

function mountChat(store: ChatStore) {
  root?.unmount();
  root = createRoot(container);
  root.render(
    <Profiler id="chat" onRender={onRender}>
      <CairnChat store={store} style={{ height: 700, width: 600 }} />
    </Profiler>,
  );
}

const longTasks: number[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) longTasks.push(entry.duration);
}).observe({ type: "longtask", buffered: false });

async function settle() {
  for (let i = 0; i < 3; i++) await painted();
}

const scenarios = {
  /** Commits and animation frames while 3,000 deltas stream in, 30 per macrotask. */
  async streaming() {
    const store = new ChatStore({ transport: burstTransport(3000, 30) });
    mountChat(store);
    await settle();
    commits = 0;
    commitsInFrame.clear();
    let frames = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      frames++;
      frame++;
      requestAnimationFrame(count);
    };
    requestAnimationFrame(count);
    await store.sendMessage("go");
    await settle();
    counting = false;
    return {
      commits,
      frames,
      mostInOneFrame: Math.max(0, ...commitsInFrame.values()),
      framesWithMore: [...commitsInFrame.values()].filter((count) => count > 1).length,
    };
  },
  /** Appending one message to a thread of `size`: time to paint and the longest task. */
  async append(size: number) {
    const store = new ChatStore({ transport: burstTransport(1, 1), initialMessages: thread(size) });
    mountChat(store);
    await settle();
    const times: number[] = [];
    const longest: number[] = [];
    for (let round = 0; round < 10; round++) {
      longTasks.length = 0;
      const start = performance.now();
      store.setMessages([
        ...store.getMessages(),
        ...thread(1).map((m) => ({ ...m, id: `n${round}` })),
      ]);
      const end = await painted();
      await settle();
      times.push(end - start);
      longest.push(Math.max(0, ...longTasks));
    }
    return { times, longest };
  },
  /** Message nodes in the DOM with a thread of `size`. */
  async domNodes(size: number) {
    const store = new ChatStore({ transport: burstTransport(1, 1), initialMessages: thread(size) });
    mountChat(store);
    await settle();
    return container.querySelectorAll(".cairn-chat-message").length;
  },
  /** Mounts a thread of `size` for the keystroke test, driven by the bench through playwright. */
  async mountThread(size: number) {
    mountChat(new ChatStore({ transport: burstTransport(1, 1), initialMessages: thread(size) }));
    await settle();
    const textarea = container.querySelector("textarea") as HTMLTextAreaElement;
    textarea.focus();
    const delays: number[] = [];
    textarea.addEventListener("keydown", (event) => {
      const down = event.timeStamp;
      void painted().then((at) => delays.push(at - down));
    });
    (window as unknown as { keyDelays: number[] }).keyDelays = delays;
  },
  /** The file manager on a folder of `count` files: time from the listing's answer to paint. */
  async files(count: number) {
    const entries = Array.from({ length: count }, (_, index) => ({
      name: `file-${String(index).padStart(5, "0")}.txt`,
      path: `/workspace/file-${String(index).padStart(5, "0")}.txt`,
      type: "file",
      size: 100 + index,
      mtime: new Date(1_700_000_000_000 + index * 1000).toISOString(),
    }));
    let answeredAt = 0;
    const fetchListing: typeof fetch = async (input) => {
      const url = new URL(String(input));
      if (url.pathname.endsWith("/events"))
        return new Response(new ReadableStream(), {
          headers: { "content-type": "text/event-stream" },
        });
      const folder = url.searchParams.get("path") ?? "/workspace";
      const body = JSON.stringify({
        path: folder,
        entries: folder === "/workspace" ? entries : [],
      });
      answeredAt = performance.now();
      return new Response(body, { headers: { "content-type": "application/json" } });
    };
    root?.unmount();
    root = createRoot(container);
    const ready = new Promise<number>((resolve) => {
      const observer = new MutationObserver(() => {
        if (container.querySelector('[role="row"][aria-rowindex="2"]') !== null) {
          observer.disconnect();
          void painted().then(resolve);
        }
      });
      observer.observe(container, { childList: true, subtree: true });
    });
    root.render(
      <CairnFileManager
        connection={{ endpoint: "http://bench.invalid", token: "t", fetch: fetchListing }}
        sandboxId="sbx_bench"
        style={{ height: 700, width: 900 }}
      />,
    );
    const paintedAt = await ready;
    return {
      firstPaint: paintedAt - answeredAt,
      rows: container.querySelectorAll('[role="row"]').length,
    };
  },
};

(window as unknown as { scenarios: typeof scenarios }).scenarios = scenarios;
document.body.dataset.ready = "true";
