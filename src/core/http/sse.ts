/** One Server-Sent Event: its name (`message` when none was given), data lines joined, id. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/** The most characters one event may hold by default (8 MiB); past it, a RangeError. */
const maxEventLength = 8 * 1024 * 1024;

/**
 * The events of a `text/event-stream` body, parsed as the HTML standard says (CR, LF or CRLF
 * line ends, even when a CRLF is cut between two chunks; comments skipped; `data` lines joined
 * with LF), in time linear in its length: each chunk is searched once. An event longer than
 * `maxLength` (8 MiB unless told) throws a RangeError (which nothing else here throws) rather than grow
 * without bound. `onChunk` is called on every chunk, comments included: the stream is alive.
 * Ends when the body ends; to stop early, abort the request the body came from.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
  maxLength = maxEventLength,
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
      // An event the body did not end is dropped, as the standard says.
      if (done) return;
      let chunk = decoder.decode(value, { stream: true });
      if (afterCR && chunk[0] === "\n") chunk = chunk.slice(1);
      const cut = Math.max(chunk.lastIndexOf("\n"), chunk.lastIndexOf("\r"));
      if (cut !== -1) {
        afterCR = chunk[cut] === "\r";
        const lines = (pending + chunk.slice(0, cut)).split(/\r\n?|\n/);
        pending = chunk.slice(cut + 1);
        for (const line of lines) {
          if (!line) {
            if (data.length) yield { event, data: data.join("\n"), id };
            event = "message";
            data = [];
            size = 0;
          } else {
            // The field is up to the first colon (a comment's is empty, matching none), the
            // value after it and one space; a line without a colon is a field with no value.
            const [, field, text] = /^([^:]*):? ?(.*)/s.exec(line) as unknown as [
              string,
              string,
              string,
            ];
            if (field === "event") event = text;
            else if (field === "data") size += data.push(text) && text.length;
            else if (field === "id" && !text.includes("\0")) id = text;
          }
        }
      } else pending += chunk;
      if (size + pending.length > maxLength) {
        throw new RangeError(`an event over ${maxLength} characters`);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
