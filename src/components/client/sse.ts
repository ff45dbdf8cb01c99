/** One Server-Sent Event: its name (`message` when none was given), data lines joined, id. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/**
 * The events of a `text/event-stream` body, parsed as the HTML standard says (CR, LF or CRLF
 * line ends, even when a CRLF is cut between two chunks; comments skipped; `data` lines joined
 * with LF). Ends when the body ends; `complete` then says whether the body ended on an event
 * boundary. Stops reading, and cancels the body, when the signal aborts.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent, { complete: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const cancel = () => {
    reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener("abort", cancel, { once: true });
  let pending = "";
  let event = "message";
  let data: string[] = [];
  let id: string | undefined;
  let blockOpen = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw signal.reason ?? new DOMException("stopped", "AbortError");
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A CR at the end may be the first half of a CRLF: keep it until the next chunk.
      const usable = done || !pending.endsWith("\r") ? pending.length : pending.length - 1;
      let start = 0;
      for (;;) {
        const cr = pending.indexOf("\r", start);
        const lf = pending.indexOf("\n", start);
        const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
        if (end === -1 || end >= usable) break;
        const line = pending.slice(start, end);
        start = end + (pending[end] === "\r" && pending[end + 1] === "\n" ? 2 : 1);
        if (line === "") {
          if (data.length > 0) yield { event, data: data.join("\n"), id };
          event = "message";
          data = [];
          blockOpen = false;
          continue;
        }
        blockOpen = true;
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const fieldValue = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = fieldValue;
        else if (field === "data") data.push(fieldValue);
        else if (field === "id" && !fieldValue.includes("\0")) id = fieldValue;
      }
      pending = pending.slice(start);
      if (done) return { complete: !blockOpen && pending === "" };
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}
