import { describe, expect, it } from "vitest";
import { readServerSentEvents, type ServerSentEvent } from "./sse.js";

/** A body that sends these strings as its chunks. */
function body(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(stream)) events.push(event);
  return events;
}

describe("readServerSentEvents", () => {
  it("reads CR, LF and CRLF line ends, a CRLF cut between chunks, comments, ids and names", async () => {
    const events = await all(
      body(
        "id: 7\r",
        "\nevent: state\r\ndata: a\rdata: b\n\n",
        ": keep-alive\n\n",
        "data: c\r",
        "\n\r\n",
      ),
    );
    expect(events).toEqual([
      { event: "state", data: "a\nb", id: "7" },
      { event: "message", data: "c", id: "7" },
    ]);
  });

  it("drops an event the body did not end", async () => {
    expect(await all(body("data: whole\n\n", "data: cut off\n"))).toEqual([
      { event: "message", data: "whole", id: undefined },
    ]);
  });

  it("reads a 6 MiB line sent in 64 KiB chunks", async () => {
    const piece = "x".repeat(64 * 1024);
    const chunks = ["data: ", ...Array.from({ length: 96 }, () => piece), "\n\n"];
    const [event] = await all(body(...chunks));
    expect(event?.data.length).toBe(6 * 1024 * 1024);
  });

  it("refuses an event over 8 MiB instead of holding it", async () => {
    const piece = "x".repeat(1024 * 1024);
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: "));
      },
      pull(controller) {
        controller.enqueue(new TextEncoder().encode(piece));
      },
    });
    await expect(all(endless)).rejects.toThrow(RangeError);
  });

  it("tells of every chunk, comments included", async () => {
    let chunks = 0;
    for await (const _ of readServerSentEvents(body(": a\n\n", ": b\n\n", "data: x\n\n"), () => {
      chunks += 1;
    }));
    expect(chunks).toBeGreaterThanOrEqual(3);
  });

  it("reads a 16 MiB line sent in 64 KiB chunks when the cap allows it", async () => {
    const piece = "x".repeat(64 * 1024);
    const chunks = ["data: ", ...Array.from({ length: 256 }, () => piece), "\n\n"];
    const events: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(body(...chunks), undefined, 32 * 1024 * 1024)) {
      events.push(event);
    }
    expect(events[0]?.data.length).toBe(16 * 1024 * 1024);
  });

  it("refuses an event over the cap it is given, naming it", async () => {
    const read = async () => {
      for await (const _ of readServerSentEvents(
        body("data: 0123456789\n", "data: 0"),
        undefined,
        10,
      ));
    };
    await expect(read()).rejects.toThrow("an event over 10 characters");
    const under: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(body("data: 0123456789\n\n"), undefined, 10)) {
      under.push(event);
    }
    expect(under).toHaveLength(1);
  });

  it("keeps U+2028 in data, and reads a field without a colon as one with no value", async () => {
    expect(await all(body("data: a\u2028b\ndata\nevent:x\n\n"))).toEqual([
      { event: "x", data: "a\u2028b\n", id: undefined },
    ]);
  });
});
