// The `data` of each server-sent event in a byte stream (the WHATWG event-stream format: lines,
// `data:` fields joined by newlines, a blank line ends an event; comments and other fields
// are skipped).

export async function* serverSentEvents(stream: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  const lineOf = (line: string): string | undefined => {
    if (line === "") {
      const event = data.length === 0 ? undefined : data.join("\n");
      data = [];
      return event;
    }
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    return undefined;
  };
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.search(/\r\n|\r|\n/);
    while (end !== -1) {
      const line = buffer.slice(0, end);
      const newline = buffer.startsWith("\r\n", end) ? 2 : 1;
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      if (newline === 1 && buffer[end] === "\r" && end === buffer.length - 1) break;
      buffer = buffer.slice(end + newline);
      const event = lineOf(line);
      if (event !== undefined) yield event;
      end = buffer.search(/\r\n|\r|\n/);
    }
  }
  buffer += decoder.decode();
  for (const line of [...buffer.split(/\r\n|\r|\n/), ""]) {
    const event = lineOf(line);
    if (event !== undefined) yield event;
  }
}
