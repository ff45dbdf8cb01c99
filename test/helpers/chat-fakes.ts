// What the chat's tests share: animation frames run by hand, and a transport whose parts the
// test pushes (it ignores the abort signal on purpose, as a careless transport would).
import type {
  ChatMessage,
  ChatStreamPart,
  ChatTransport,
} from "../../src/components/chat/types.js";

/** A scheduler the test runs by hand, as a browser runs animation frames; `wrap` runs each. */
export function frames(wrap: (callback: () => void) => void = (callback) => callback()) {
  let pending: (() => void) | undefined;
  return {
    schedule: (callback: () => void) => {
      pending = callback;
      return () => {
        pending = undefined;
      };
    },
    run() {
      const callback = pending;
      pending = undefined;
      if (callback !== undefined) wrap(callback);
    },
  };
}

/** A transport whose parts the test pushes ("end" ends the stream without a finish part). */
export function pushTransport() {
  const queue: Array<ChatStreamPart | "end"> = [];
  let wake: (() => void) | undefined;
  const requests: Array<{ messages: readonly ChatMessage[]; signal: AbortSignal }> = [];
  const transport: ChatTransport = {
    async *send(messages, { signal }) {
      requests.push({ messages, signal });
      let next = queue.shift();
      while (next !== "end") {
        if (next === undefined) await new Promise<void>((resolve) => (wake = resolve));
        else yield next;
        next = queue.shift();
      }
    },
  };
  return {
    transport,
    requests,
    /** The abort signal of each request, in order. */
    get signals() {
      return requests.map((request) => request.signal);
    },
    push(...parts: Array<ChatStreamPart | "end">) {
      queue.push(...parts);
      wake?.();
    },
  };
}
