/** One Server-Sent Event: its name (`message` when none was given), data lines joined, id. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/** The most characters one event may hold; past it, a RangeError. */
const maxEventLength = 8 * 1024 * 1024;

/**
 * The events of a `text/event-stream` body, parsed as the HTML standard says (CR, LF or CRLF
 * line ends, even when a CRLF is cut between two chunks; comments skipped; `data` lines joined
 * with LF), in time linear in its length: each chunk is searched once. An event longer than
 * `maxEventLength` throws a RangeError (which nothing else here throws) rather than grow
 * without bound. `onChunk` is called on every chunk, comments included: the stream is alive.
 * Ends when the body ends; to stop early, abort the request the body came from.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  // The line begun and not ended yet; whether the last line ended with a CR (of a CRLF maybe).
  let pending = "";
  let afterCR = false;
  let event = "message";
  let data: string[] = [];
  let size = 0;
  let id: string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      onChunk?.();
      let chunk = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
      // An event the body did not end is dropped, as the standard says.
      if (done) return;
      const cut = Math.max(chunk.lastIndexOf("\n"), chunk.lastIndexOf("\r"));
      if (cut !== -1) {
        afterCR = chunk[cut] === "\r";
        const lines = (pending + chunk.slice(0, cut)).split(/\r\n|\r|\n/);
        pending = chunk.slice(cut + 1);
        for (const line of lines) {
          if (line === "") {
            if (data.length > 0) yield { event, data: data.join("\n"), id };
            event = "message";
            data = [];
            size = 0;
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const field = colon === -1 ? line : line.slice(0, colon);
            const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "event") event = text;
            else if (field === "data") size += data.push(text) && text.length;
            else if (field === "id" && !text.includes("\0")) id = text;
          }
        }
      } else pending += chunk;
      if (size + pending.length > maxEventLength) {
        throw new RangeError("the stream sent an event over 8 MiB");
      }
    }
  } finally {
    reader.releaseLock();
  }
}
