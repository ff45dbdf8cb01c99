// In-memory backends for CairnChat's stories and tests: no network. A chat route that answers
// as an AI SDK `toUIMessageStreamResponse()` does (Server-Sent Events, the UI message stream
// header, one part per event, `[DONE]`), read by the real transport; and an exec service that
// answers `GET /api/sandboxes/{id}/exec/{execId}` and speaks the exec WebSocket protocol.

import { createUIMessageStreamTransport } from "../../src/components/chat/index.js";
import type {
  ChatMessage,
  ChatStreamPart,
  ChatTransport,
} from "../../src/components/chat/types.js";
import type { CairnConnection } from "../../src/components/client/connection.js";

/** One step of a scripted answer. */
export type ChatScriptStep =
  | ChatStreamPart
  /** Waits this long before the next step (on top of the usual pace). */
  | { readonly wait: number }
  /** Ends the body here, without `finish`: a dropped connection. */
  | { readonly drop: true }
  /** Sends nothing more and never ends: only a stop ends it. */
  | { readonly hang: true };

export type ChatScript = (messages: readonly ChatMessage[], call: number) => ChatScriptStep[];

export interface FakeChatBackend {
  readonly transport: ChatTransport;
  /** The requests made, and whether each was aborted by the client. */
  readonly requests: Array<{ messages: readonly ChatMessage[]; aborted: boolean }>;
}

/** Text as the parts of a streamed text block, a few words per delta. */
export function textParts(text: string, id = "text-1", wordsPerDelta = 1): ChatStreamPart[] {
  const words = text.split(/(?<= )/);
  const parts: ChatStreamPart[] = [{ type: "text-start", id }];
  for (let index = 0; index < words.length; index += wordsPerDelta) {
    parts.push({
      type: "text-delta",
      id,
      delta: words.slice(index, index + wordsPerDelta).join(""),
    });
  }
  parts.push({ type: "text-end", id });
  return parts;
}

/** A whole answer: start, the text streamed word by word, finish. */
export function answer(text: string, messageId?: string): ChatScriptStep[] {
  return [
    { type: "start", ...(messageId === undefined ? {} : { messageId }) },
    ...textParts(text),
    { type: "finish", finishReason: "stop" },
  ];
}

/**
 * A chat backend that streams each answer of the script, one step every `paceMs`, as a real
 * route would: through fetch, so the real UI message stream transport reads it.
 */
export function fakeChatBackend(script: ChatScript, paceMs = 30): FakeChatBackend {
  const requests: FakeChatBackend["requests"] = [];
  const encoder = new TextEncoder();
  const fakeFetch = async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const { messages } = JSON.parse(String(init?.body)) as { messages: ChatMessage[] };
    const request = { messages, aborted: false };
    requests.push(request);
    const steps = script(messages, requests.length - 1);
    const signal = init?.signal ?? undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let index = 0;
        const abort = () => {
          request.aborted = true;
          if (timer !== undefined) clearTimeout(timer);
          try {
            controller.error(signal?.reason ?? new DOMException("aborted", "AbortError"));
          } catch {
            // Already closed.
          }
        };
        signal?.addEventListener("abort", abort, { once: true });
        const next = (delay: number) => {
          timer = setTimeout(() => {
            const step = steps[index++];
            if (step === undefined) {
              controller.enqueue(encoder.encode("data: [DONE]\n\n"));
              controller.close();
              return;
            }
            if ("hang" in step) return;
            if ("drop" in step) {
              controller.error(new TypeError("network connection lost"));
              return;
            }
            if ("wait" in step) {
              next(step.wait);
              return;
            }
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(step)}\n\n`));
            next(paceMs);
          }, delay);
        };
        next(paceMs);
      },
      cancel() {
        if (timer !== undefined) clearTimeout(timer);
      },
    });
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
      },
    });
  };
  return {
    transport: createUIMessageStreamTransport({ api: "/api/chat", fetch: fakeFetch }),
    requests,
  };
}

/** A long conversation, with messages of varied heights. */
export function longThread(count: number): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let index = 0; index < count; index++) {
    const user = index % 2 === 0;
    const lines = 1 + ((index * 7) % 5);
    const text = user
      ? `Question ${index + 1}: what about item ${index}?`
      : Array.from({ length: lines }, (_, line) => `Answer ${index + 1}, line ${line + 1}.`).join(
          "\n\n",
        );
    messages.push({
      id: `m-${index}`,
      role: user ? "user" : "assistant",
      parts: [{ type: "text", text }],
    });
  }
  return messages;
}

// --- Exec service --------------------------------------------------------------------------

export interface FakeExec {
  readonly sandboxId: string;
  readonly execId: string;
  readonly cmd: string;
  readonly args: readonly string[];
  /** What it prints, in order, one chunk every `paceMs`. */
  readonly output: ReadonlyArray<{ readonly channel: 1 | 2; readonly text: string }>;
  readonly exitCode: number;
}

/**
 * An exec service: `connection` answers `GET /api/sandboxes/{id}/exec/{execId}` as the real
 * route does (the record and a token for the socket), and `WebSocket` is a socket class that
 * serves `…/exec/{execId}?token=&since=` as the runner does: `attached`, binary output frames
 * [channel, ...bytes] from `since`, then `exit` and a 1000 close.
 */
export function fakeExecService(
  execs: readonly FakeExec[],
  paceMs = 120,
): { connection: CairnConnection; WebSocket: typeof WebSocket } {
  const token = (exec: FakeExec) => `exec-token-${exec.execId}`;
  const find = (sandboxId: string, execId: string) =>
    execs.find((exec) => exec.sandboxId === sandboxId && exec.execId === execId);
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });

  const fakeFetch = async (input: RequestInfo | URL): Promise<Response> => {
    const url = new URL(String(input));
    const [, sandboxId = "", execId = ""] =
      /^\/api\/sandboxes\/([^/]+)\/exec\/([^/]+)$/.exec(url.pathname) ?? [];
    const exec = find(decodeURIComponent(sandboxId), decodeURIComponent(execId));
    if (exec === undefined) {
      return json(404, { error: "not_found", message: `no exec ${execId} in ${sandboxId}` });
    }
    return json(200, {
      execId: exec.execId,
      sandboxId: exec.sandboxId,
      cmd: exec.cmd,
      args: exec.args,
      cwd: "/workspace",
      pty: false,
      state: "running",
      exitCode: null,
      signal: null,
      startedAt: new Date().toISOString(),
      endedAt: null,
      outputBytes: 0,
      bufferStart: 0,
      cpuSeconds: null,
      memoryPeakBytes: null,
      token: token(exec),
    });
  };

  class FakeExecSocket extends EventTarget {
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    binaryType: BinaryType = "blob";
    readyState = 0;
    onmessage: ((event: MessageEvent) => void) | null = null;
    onclose: ((event: CloseEvent) => void) | null = null;
    onopen: ((event: Event) => void) | null = null;
    onerror: ((event: Event) => void) | null = null;
    readonly url: string;
    #timer: ReturnType<typeof setTimeout> | undefined;

    constructor(url: string | URL) {
      super();
      this.url = String(url);
      const parsed = new URL(this.url);
      const [, sandboxId = "", execId = ""] =
        /^\/api\/sandboxes\/([^/]+)\/exec\/([^/]+)$/.exec(parsed.pathname) ?? [];
      const exec = find(decodeURIComponent(sandboxId), decodeURIComponent(execId));
      const since = Number(parsed.searchParams.get("since") ?? 0);
      this.#timer = setTimeout(() => {
        if (exec === undefined || parsed.searchParams.get("token") !== token(exec)) {
          this.#close(1006, "");
          return;
        }
        this.readyState = 1;
        this.onopen?.(new Event("open"));
        this.#send(JSON.stringify({ type: "attached", offset: since }));
        this.#play(exec, since);
      }, 10);
    }

    #play(exec: FakeExec, since: number) {
      const encoder = new TextEncoder();
      let offset = 0;
      let index = 0;
      const step = () => {
        if (this.readyState !== 1) return;
        const chunk = exec.output[index++];
        if (chunk === undefined) {
          this.#send(JSON.stringify({ type: "exit", exitCode: exec.exitCode, signal: null }));
          this.#close(1000, "");
          return;
        }
        const bytes = encoder.encode(chunk.text);
        const start = Math.max(0, since - offset);
        offset += bytes.byteLength;
        if (start < bytes.byteLength) {
          const frame = new Uint8Array(bytes.byteLength - start + 1);
          frame[0] = chunk.channel;
          frame.set(bytes.subarray(start), 1);
          this.#send(frame.buffer);
        }
        this.#timer = setTimeout(step, paceMs);
      };
      this.#timer = setTimeout(step, paceMs);
    }

    #send(data: string | ArrayBuffer) {
      this.onmessage?.(new MessageEvent("message", { data }));
    }

    #close(code: number, reason: string) {
      if (this.readyState === 3) return;
      this.readyState = 3;
      clearTimeout(this.#timer);
      this.onclose?.(new CloseEvent("close", { code, reason, wasClean: code === 1000 }));
    }

    send(): void {}

    close(code = 1000, reason = ""): void {
      this.#close(code, reason);
    }
  }

  return {
    connection: { endpoint: "http://cairn.test", token: "sandbox-token", fetch: fakeFetch },
    WebSocket: FakeExecSocket as unknown as typeof WebSocket,
  };
}
