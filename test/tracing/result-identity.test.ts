import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { configure, observe, shutdown } from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { describe, expect, it, vi } from "vitest";
import { captureLog } from "../helpers/log.js";
import { useMemoryExporter } from "../helpers/tracing.js";

class ApiPromise<T> extends Promise<T> {
  withResponse() {
    return this.then((data) => ({ data, response: { status: 200 } }));
  }
}

describe("observe() hands back what the function returned", () => {
  const memory = useMemoryExporter();
  const spans = () => memory.exporter.spans();

  it("keeps a Promise subclass with its own methods, and records it when it settles", async () => {
    const create = observe(
      () => ApiPromise.resolve({ id: "cmpl-1" }) as ApiPromise<{ id: string }>,
      { kind: "llm" },
    );
    const result = create();
    expect(result).toBeInstanceOf(ApiPromise);
    await expect(result.withResponse()).resolves.toMatchObject({ data: { id: "cmpl-1" } });
    await vi.waitFor(() => expect(spans()[0]?.output).toBe('{"id":"cmpl-1"}'));
  });

  it("does not run a lazy thenable the caller never awaits", () => {
    let executed = false;
    const query = {
      // biome-ignore lint/suspicious/noThenProperty: a lazy query builder is exactly this.
      then(resolve: (value: string) => void) {
        executed = true;
        resolve("rows");
      },
      where() {
        return this;
      },
    };
    const build = observe(() => query);
    expect(build()).toBe(query);
    expect(executed).toBe(false);
    expect(spans()[0]?.attributes["cairn.result.lazy"]).toBe(true);
  });

  it("never throws into the caller when inspecting the result fails", () => {
    const hostile = {
      // biome-ignore lint/suspicious/noThenProperty: the test needs a `then` that throws.
      get then(): never {
        throw new Error("then getter");
      },
    };
    const log = captureLog();
    try {
      expect(observe(() => hostile)()).toBe(hostile);
      expect(spans()).toHaveLength(1);
    } finally {
      log.restore();
    }
  });

  it("keeps private-field methods of an async iterable working during and after iteration", async () => {
    class Feed {
      #items = ["a", "b"];
      async *[Symbol.asyncIterator]() {
        yield* this.#items;
      }
      size() {
        return this.#items.length;
      }
    }
    const feed = await observe(async () => new Feed())();
    const seen: number[] = [];
    for await (const _item of feed) seen.push(feed.size());
    expect(seen).toEqual([2, 2]);
    expect(feed.size()).toBe(2);
    expect(spans()[0]?.output).toBe("ab");
  });

  it("follows a Node stream consumed through pipe()", async () => {
    const source = observe(() => Readable.from(["x", "y", "z"]), { spanName: "node-stream" });
    let written = "";
    await pipeline(
      source(),
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written += chunk.toString();
          done();
        },
      }),
    );
    expect(written).toBe("xyz");
    await vi.waitFor(() => expect(spans()[0]).toMatchObject({ name: "node-stream", status: "ok" }));
  });

  it("keeps an outer span open while the generator of an inner observed call is consumed", () => {
    const inner = observe(function* letters() {
      yield "a";
      yield "b";
    });
    const outer = observe(() => inner(), { spanName: "outer" });
    const iterator = outer();
    expect(Object.prototype.toString.call(iterator)).toBe("[object Generator]");
    expect([...iterator]).toEqual(["a", "b"]);
    expect(spans().map((span) => [span.name, span.output])).toEqual([
      ["letters", "ab"],
      ["outer", "ab"],
    ]);
  });

  it("reads an aborted stream as cancelled, not failed", async () => {
    const streamed = observe(
      () =>
        new ReadableStream<string>({
          pull(controller) {
            controller.enqueue("tick");
          },
        }),
    );
    const abort = new AbortController();
    const piping = streamed().pipeTo(new WritableStream(), { signal: abort.signal });
    abort.abort();
    await expect(piping).rejects.toThrow();
    await vi.waitFor(() => expect(spans()[0]?.attributes["cairn.stream.cancelled"]).toBe(true));
    expect(spans()[0]?.status).toBe("ok");
  });
});

describe("recording a long stream", () => {
  it("keeps only the chunks that fit the budget in memory", async () => {
    const exporter = memoryExporter();
    const kept: number[] = [];
    configure({
      exporter,
      maxPayloadLength: 1000,
      aggregateChunks: (chunks) => {
        kept.push(chunks.length);
        return chunks.join("");
      },
    });
    const long = observe(function* long() {
      for (let index = 0; index < 10_000; index++) yield "0123456789";
    });
    for (const _chunk of long()) {
      // drain
    }
    expect(kept).toEqual([100]);
    expect(exporter.spans()[0]?.attributes["cairn.stream.chunks"]).toBe(10_000);
    await shutdown();
  });
});
