import { observe } from "cairn-ai";
import { describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("observe() on streamed results", () => {
  const memory = useMemoryExporter();
  const spans = () => memory.exporter.spans();

  it("keeps a generator's span open until the consumer finishes, and joins its chunks", () => {
    const child = observe((word: string) => word.toUpperCase(), { spanName: "shout" });
    const words = observe(function* words(count: number) {
      for (let index = 0; index < count; index++) yield child(`w${index}`);
      return "done";
    });
    const iterator = words(3);
    expect(iterator.next().value).toBe("W0");
    expect(spans().map((span) => span.name)).toEqual(["shout"]);
    expect([...iterator]).toEqual(["W1", "W2"]);
    const parent = spans().find((span) => span.name === "words");
    expect(parent).toMatchObject({ output: "W0W1W2", status: "ok" });
    expect(parent?.attributes["cairn.stream.chunks"]).toBe(3);
    const children = spans().filter((span) => span.name === "shout");
    expect(children).toHaveLength(3);
    for (const span of children) expect(span.parent_span_id).toBe(parent?.span_id);
  });

  it("follows an async generator and nests spans made inside it", async () => {
    const fetchPage = observe(async (page: number) => `page-${page}`, { kind: "retrieval" });
    const pages = observe(async function* pages() {
      for (let page = 1; page <= 2; page++) {
        await tick();
        yield await fetchPage(page);
      }
    });
    const seen: string[] = [];
    for await (const page of pages()) seen.push(page);
    expect(seen).toEqual(["page-1", "page-2"]);
    const parent = spans().find((span) => span.name === "pages");
    expect(parent?.output).toBe("page-1page-2");
    const children = spans().filter((span) => span.kind === "retrieval");
    expect(children.map((span) => span.parent_span_id)).toEqual([parent?.span_id, parent?.span_id]);
  });

  it("ends the span as cancelled when the consumer stops early", async () => {
    let cleanedUp = false;
    const numbers = observe(async function* numbers() {
      try {
        for (let index = 0; ; index++) yield index;
      } finally {
        cleanedUp = true;
      }
    });
    for await (const value of numbers()) if (value === 2) break;
    expect(cleanedUp).toBe(true);
    const [span] = spans();
    expect(span).toMatchObject({ status: "ok", output: "[0,1,2]" });
    expect(span?.attributes["cairn.stream.cancelled"]).toBe(true);
  });

  it("ends the span with the error when the generator fails midway", async () => {
    const failure = new Error("stream broke");
    const flaky = observe(async function* flaky() {
      yield "a";
      throw failure;
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of flaky()) seen.push(chunk);
      })(),
    ).rejects.toBe(failure);
    expect(seen).toEqual(["a"]);
    expect(spans()[0]).toMatchObject({ status: "error", status_message: "stream broke" });
  });

  it("ends the span with the error the consumer throws into the generator", () => {
    const gen = observe(function* letters() {
      yield "x";
      yield "y";
    });
    const iterator = gen();
    iterator.next();
    expect(() => iterator.throw(new Error("consumer gave up"))).toThrow("consumer gave up");
    expect(spans()[0]).toMatchObject({ status: "error", status_message: "consumer gave up" });
  });

  it("follows a ReadableStream returned by an async function, decoding bytes", async () => {
    const encoder = new TextEncoder();
    const streamed = observe(async () => {
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("Hello, "));
          controller.enqueue(encoder.encode("wörld"));
          controller.close();
        },
      });
    });
    const stream = await streamed();
    expect(spans()).toHaveLength(0);
    const text = await new Response(stream).text();
    expect(text).toBe("Hello, wörld");
    expect(spans()[0]).toMatchObject({ output: "Hello, wörld", status: "ok" });
  });

  it("marks a cancelled ReadableStream", async () => {
    const streamed = observe(
      () =>
        new ReadableStream<string>({
          pull(controller) {
            controller.enqueue("tick");
          },
        }),
    );
    const reader = streamed().getReader();
    await reader.read();
    await reader.cancel("user left");
    expect(spans()[0]?.attributes["cairn.stream.cancelled"]).toBe(true);
  });

  it("follows a Response body and keeps status and headers", async () => {
    const handler = observe(
      async () =>
        new Response("streamed body", {
          status: 201,
          headers: { "x-model": "m1" },
        }),
      { kind: "llm" },
    );
    const response = await handler();
    expect(response.status).toBe(201);
    expect(response.headers.get("x-model")).toBe("m1");
    expect(await response.text()).toBe("streamed body");
    expect(spans()[0]).toMatchObject({ output: "streamed body", kind: "llm" });
    expect(spans()[0]?.attributes["http.response.status_code"]).toBe(201);
  });

  it("keeps the methods of an async iterable object and records OpenAI-style chunks", async () => {
    class ChatStream {
      #chunks = [
        {
          object: "chat.completion.chunk",
          model: "gpt-4o-mini",
          choices: [{ delta: { content: "Hi" } }],
        },
        {
          object: "chat.completion.chunk",
          model: "gpt-4o-mini",
          choices: [{ delta: { content: " there" } }],
        },
        {
          object: "chat.completion.chunk",
          model: "gpt-4o-mini",
          choices: [],
          usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
        },
      ];
      controller = new AbortController();
      async *[Symbol.asyncIterator]() {
        for (const chunk of this.#chunks) yield chunk;
      }
      label() {
        return `stream of ${this.#chunks.length}`;
      }
    }
    const create = observe(async () => new ChatStream(), { kind: "llm" });
    const stream = await create();
    expect(stream.label()).toBe("stream of 3");
    expect(stream.controller).toBeInstanceOf(AbortController);
    for await (const _chunk of stream) {
      // drain
    }
    expect(spans()[0]).toMatchObject({
      output: "Hi there",
      model: "gpt-4o-mini",
      usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
    });
    expect(spans()[0]?.cost_usd).toBeGreaterThan(0);
  });

  it("bounds what it records of a long stream", () => {
    const long = observe(function* long() {
      for (let index = 0; index < 10_000; index++) yield "0123456789";
    });
    let count = 0;
    for (const _chunk of long()) count++;
    expect(count).toBe(10_000);
    const [span] = spans();
    expect(span?.attributes["cairn.stream.chunks"]).toBe(10_000);
    expect(span?.attributes["cairn.output.truncated"]).toBe(true);
    expect(span?.output?.length).toBeLessThan(40_000);
  });

  it("ends the span of a stream nobody finishes once it is garbage-collected", async () => {
    const { setFlagsFromString } = await import("node:v8");
    const { runInNewContext } = await import("node:vm");
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const endless = observe(function* endless() {
      for (;;) yield 1;
    });
    (() => {
      const iterator = endless();
      iterator.next();
    })();
    for (let attempt = 0; attempt < 50 && spans().length === 0; attempt++) {
      gc();
      await tick();
    }
    expect(spans()[0]?.attributes["cairn.stream.abandoned"]).toBe(true);
  });
});
