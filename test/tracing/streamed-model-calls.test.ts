import { observe } from "cairn-ai";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { useMemoryExporter } from "../helpers/tracing.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Chunk {
  object: "chat.completion.chunk";
  model: string;
  choices: Array<{ index: number; delta: Record<string, unknown> }>;
  usage?: Record<string, unknown> | null;
}

const chunk = (delta: Record<string, unknown>, usage: Chunk["usage"] = null): Chunk => ({
  object: "chat.completion.chunk",
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, delta }],
  usage,
});

const usageChunk = (usage: Record<string, unknown>): Chunk => ({
  ...chunk({}, usage),
  choices: [],
});

const finalUsage = {
  prompt_tokens: 1_000_000,
  completion_tokens: 100_000,
  total_tokens: 1_100_000,
  prompt_tokens_details: { cached_tokens: 400_000 },
  completion_tokens_details: { reasoning_tokens: 30_000 },
};

/** Like OpenAI's `Stream`: an async iterable with a controller, `tee()` and a private field. */
class FakeStream implements AsyncIterable<Chunk> {
  readonly controller = new AbortController();
  #source: () => AsyncGenerator<Chunk>;
  constructor(source: () => AsyncGenerator<Chunk>) {
    this.#source = source;
  }
  [Symbol.asyncIterator](): AsyncIterator<Chunk> {
    return this.#source();
  }
  tee(): [FakeStream, FakeStream] {
    const seen: Chunk[] = [];
    const iterator = this.#source();
    let done = false;
    const branch = (offset: { at: number }) =>
      new FakeStream(async function* () {
        for (;;) {
          while (offset.at < seen.length) yield seen[offset.at++] as Chunk;
          if (done) return;
          const next = await iterator.next();
          if (next.done) done = true;
          else seen.push(next.value);
        }
      });
    return [branch({ at: 0 }), branch({ at: 0 })];
  }
}

/** Like OpenAI's `APIPromise`: a Promise subclass with a private field and its own methods. */
class FakeApiPromise<T> extends Promise<T> {
  #response = { status: 200, headers: { "x-request-id": "req_1" } };
  static of<T>(value: T | Promise<T>): FakeApiPromise<T> {
    return new FakeApiPromise<T>((resolve) => resolve(value));
  }
  asResponse() {
    return Promise.resolve(this.#response);
  }
  async withResponse() {
    return { data: await this, response: this.#response, request_id: "req_1" };
  }
}

const request = {
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Say hello" }],
  stream: true,
  stream_options: { include_usage: true },
};

/** A client whose create() streams `chunks`, `delayMs` apart, inside a Promise subclass. */
function fakeClient(chunks: readonly Chunk[], delayMs = 0) {
  const state = { pulled: 0, closed: false };
  const stream = new FakeStream(async function* () {
    try {
      for (const each of chunks) {
        if (delayMs > 0) await sleep(delayMs);
        state.pulled++;
        yield each;
      }
    } finally {
      state.closed = true;
    }
  });
  const create = (_body: typeof request) => FakeApiPromise.of(stream);
  return { create, state, stream };
}

const textChunks = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Hello" }),
  chunk({ content: ", world" }),
  chunk({}),
  usageChunk(finalUsage),
];

describe("observe() on a model call that streams inside a Promise subclass", () => {
  const memory = useMemoryExporter();
  const spans = () => memory.exporter.spans();

  it("follows the stream to its end and records text, model, tokens and cost", async () => {
    const client = fakeClient(textChunks, 10);
    const create = observe(client.create);
    const pending = create(request);
    expect(pending).toBeInstanceOf(FakeApiPromise);
    const stream = await pending;
    expect(stream).toBeInstanceOf(FakeStream);
    expect(stream.controller).toBeInstanceOf(AbortController);
    const texts: string[] = [];
    for await (const each of stream) {
      texts.push(String(each.choices[0]?.delta.content ?? ""));
      expect(spans()).toHaveLength(0);
    }
    expect(texts.join("")).toBe("Hello, world");
    const [span] = spans();
    expect(span).toMatchObject({
      kind: "llm",
      status: "ok",
      output: "Hello, world",
      model: "gpt-4o-mini",
      usage: {
        prompt_tokens: 1_000_000,
        completion_tokens: 100_000,
        total_tokens: 1_100_000,
        cached_tokens: 400_000,
        reasoning_tokens: 30_000,
      },
    });
    // gpt-4o-mini: 600k prompt at $0.15, 400k cached at $0.075, 100k completion at $0.60.
    expect(span?.cost_usd).toBeCloseTo(0.09 + 0.03 + 0.06, 10);
    expect(span?.attributes["gen_ai.response.model"]).toBe("gpt-4o-mini-2024-07-18");
    expect(span?.attributes["llm.token_count.prompt_details.cache_read"]).toBe(400_000);
    expect(span?.attributes["cairn.stream.chunks"]).toBe(5);
    expect(span?.duration_ms).toBeGreaterThanOrEqual(45);
  });

  it("hands each chunk on as it arrives, without reading ahead", async () => {
    const client = fakeClient(textChunks);
    const stream = await observe(client.create)(request);
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    expect(client.state.pulled).toBe(2);
    await iterator.return?.();
  });

  it("keeps withResponse() and asResponse() working, with the followed stream as data", async () => {
    const client = fakeClient(textChunks);
    const pending = observe(client.create)(request);
    await expect(pending.asResponse()).resolves.toMatchObject({ status: 200 });
    const { data, request_id } = await pending.withResponse();
    expect(request_id).toBe("req_1");
    for await (const _each of data) {
      // drain
    }
    expect(spans()[0]).toMatchObject({ output: "Hello, world", status: "ok" });
  });

  it("ends the span as cancelled when the consumer breaks, and closes the stream", async () => {
    const client = fakeClient(textChunks);
    for await (const each of await observe(client.create)(request)) {
      if (each.choices[0]?.delta.content === "Hello") break;
    }
    expect(client.state.closed).toBe(true);
    expect(client.state.pulled).toBe(2);
    const [span] = spans();
    expect(span).toMatchObject({ status: "ok", output: "Hello", model: "gpt-4o-mini" });
    expect(span?.attributes["cairn.stream.cancelled"]).toBe(true);
  });

  it("ends the span as cancelled when the consumer's loop throws", async () => {
    const client = fakeClient(textChunks);
    const stream = await observe(client.create)(request);
    await expect(
      (async () => {
        for await (const _each of stream) throw new Error("renderer crashed");
      })(),
    ).rejects.toThrow("renderer crashed");
    expect(spans()[0]).toMatchObject({ status: "ok", output: "" });
    expect(spans()[0]?.attributes["cairn.stream.cancelled"]).toBe(true);
  });

  it("ends the span with the error when the stream fails midway", async () => {
    const stream = new FakeStream(async function* () {
      yield chunk({ content: "Hel" });
      throw new Error("connection reset");
    });
    const create = observe((_body: typeof request) => FakeApiPromise.of(stream));
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const each of await create(request)) {
          seen.push(String(each.choices[0]?.delta.content));
        }
      })(),
    ).rejects.toThrow("connection reset");
    expect(seen).toEqual(["Hel"]);
    expect(spans()[0]).toMatchObject({
      status: "error",
      status_message: "connection reset",
      model: "gpt-4o-mini",
    });
  });

  it("fails the span when the promise rejects, without an unhandled rejection", async () => {
    const create = observe((_body: typeof request) =>
      FakeApiPromise.of<FakeStream>(Promise.reject(new Error("429 rate limited"))),
    );
    const pending = create(request);
    await expect(pending).rejects.toThrow("429 rate limited");
    expect(spans()[0]).toMatchObject({ status: "error", status_message: "429 rate limited" });
  });

  it("assembles tool calls from their deltas", async () => {
    const call = (delta: Record<string, unknown>) => chunk({ tool_calls: [delta] });
    const client = fakeClient([
      chunk({ role: "assistant", content: null }),
      call({ index: 0, id: "call_1", type: "function", function: { name: "weather" } }),
      call({ index: 0, function: { arguments: '{"city":' } }),
      call({ index: 0, function: { arguments: '"Paris"}' } }),
      call({
        index: 1,
        id: "call_2",
        type: "function",
        function: { name: "time", arguments: "{}" },
      }),
      chunk({}),
    ]);
    for await (const _each of await observe(client.create)(request)) {
      // drain
    }
    expect(JSON.parse(spans()[0]?.output ?? "null")).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "weather", arguments: '{"city":"Paris"}' },
        },
        { id: "call_2", type: "function", function: { name: "time", arguments: "{}" } },
      ],
    });
  });

  it("follows the first branch of tee()", async () => {
    const client = fakeClient(textChunks);
    const [first, second] = (await observe(client.create)(request)).tee();
    for await (const _each of second) {
      // the second branch is the caller's own
    }
    expect(spans()).toHaveLength(0);
    for await (const _each of first) {
      // drain
    }
    expect(spans()[0]).toMatchObject({ output: "Hello, world", status: "ok" });
  });

  it("follows a stream returned directly, not in a promise", async () => {
    const create = observe(
      (_body: typeof request) =>
        new FakeStream(async function* () {
          yield* textChunks;
        }),
    );
    const stream = create(request);
    expect(stream).toBeInstanceOf(FakeStream);
    expect(spans()).toHaveLength(0);
    for await (const _each of stream) {
      // drain
    }
    expect(spans()[0]).toMatchObject({ output: "Hello, world", model: "gpt-4o-mini" });
    expect(spans()[0]?.usage?.cached_tokens).toBe(400_000);
  });

  it("records a non-streamed completion as its text, with model, tokens and cost", async () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "gpt-4o-mini-2024-07-18",
      choices: [
        { index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" },
      ],
      usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 },
    };
    const create = observe((_body: typeof request) => FakeApiPromise.of(completion));
    const pending = create({ ...request, stream: false });
    expect(await pending).toBe(completion);
    expect((await pending.withResponse()).data).toBe(completion);
    expect(spans()[0]).toMatchObject({
      kind: "llm",
      output: "Hello",
      model: "gpt-4o-mini",
      usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 },
      cost_usd: 0.75,
    });
  });

  it("keeps an explicit kind, and leaves calls without a chat request as they were", async () => {
    const tool = observe((_body: typeof request) => "done", { kind: "tool" });
    tool(request);
    const words = observe(async function* words(_options: { model: string }) {
      yield "a";
      yield "b";
    });
    for await (const _word of words({ model: "not-a-chat" })) {
      // drain
    }
    expect(spans().map((span) => [span.kind, span.model, span.output])).toEqual([
      ["tool", null, "done"],
      ["chain", null, "ab"],
    ]);
  });
});

describe("observe() on the official openai client against an OpenAI-compatible server", () => {
  const memory = useMemoryExporter();
  const usage = {
    prompt_tokens: 2_000,
    completion_tokens: 50,
    total_tokens: 2_050,
    prompt_tokens_details: { cached_tokens: 1_024 },
    completion_tokens_details: { reasoning_tokens: 20 },
  };

  it("records a streamed chat as its text, with the requested model, usage and cost", async () => {
    const fake = await startFakeOpenAI([{ text: "Bonjour tout le monde", usage }], {
      chunkDelayMs: 5,
    });
    try {
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const create = observe(client.chat.completions.create.bind(client.chat.completions));
      const stream = await create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Say hello in French" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      for await (const each of stream) {
        text += each.choices[0]?.delta.content ?? "";
        expect(memory.exporter.spans()).toHaveLength(0);
      }
      const consumedAt = Date.now();
      expect(text).toBe("Bonjour tout le monde");
      const [span] = memory.exporter.spans();
      expect(span).toMatchObject({
        kind: "llm",
        status: "ok",
        output: "Bonjour tout le monde",
        model: "gpt-4o-mini",
        usage: {
          prompt_tokens: 2_000,
          completion_tokens: 50,
          total_tokens: 2_050,
          cached_tokens: 1_024,
          reasoning_tokens: 20,
        },
      });
      expect(JSON.parse(span?.input ?? "null")).toMatchObject({
        messages: [{ role: "user", content: "Say hello in French" }],
      });
      // gpt-4o-mini: 976 prompt at $0.15/M, 1,024 cached at $0.075/M, 50 completion at $0.60/M.
      expect(span?.cost_usd).toBeCloseTo((976 * 0.15 + 1_024 * 0.075 + 50 * 0.6) / 1e6, 12);
      // The span lasts until the stream ended, not until the response headers came.
      const request = fake.requests[0];
      expect(request).toBeDefined();
      const endedAt = Date.parse(span?.end_time ?? "");
      expect(endedAt).toBeGreaterThan(request?.receivedAt ?? Number.POSITIVE_INFINITY);
      expect(endedAt).toBeLessThanOrEqual(consumedAt);
    } finally {
      await fake.close();
    }
  });

  it("records a chat that calls tools, streamed or not, as the assistant's tool calls", async () => {
    const toolCall = { id: "call_w", name: "weather", arguments: '{"city":"Lyon"}' };
    const fake = await startFakeOpenAI([{ toolCalls: [toolCall] }, { toolCalls: [toolCall] }]);
    try {
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const create = observe(client.chat.completions.create.bind(client.chat.completions));
      const body = {
        model: "gpt-4o-mini",
        messages: [{ role: "user" as const, content: "Weather in Lyon?" }],
      };
      const answer = await create(body);
      expect(answer.choices[0]?.message.tool_calls?.[0]?.id).toBe("call_w");
      for await (const _each of await create({ ...body, stream: true })) {
        // drain
      }
      const expected = {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_w",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Lyon"}' },
          },
        ],
      };
      const spans = memory.exporter.spans();
      expect(spans).toHaveLength(2);
      for (const span of spans) {
        expect(span).toMatchObject({ kind: "llm", model: "gpt-4o-mini", status: "ok" });
        expect(JSON.parse(span.output ?? "null")).toEqual(expected);
      }
    } finally {
      await fake.close();
    }
  });

  it("keeps .withResponse() and records a refused call as an error with the API's message", async () => {
    const fake = await startFakeOpenAI([{ text: "ok" }, { status: 401 }]);
    try {
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const create = observe(client.chat.completions.create.bind(client.chat.completions));
      const body = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };
      const { data, response } = await create(body).withResponse();
      expect(response.status).toBe(200);
      expect(data.choices[0]?.message.content).toBe("ok");
      await expect(create(body)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const [ok, refused] = memory.exporter.spans();
      expect(ok).toMatchObject({ status: "ok", output: "ok" });
      expect(refused).toMatchObject({ kind: "llm", status: "error", model: "gpt-4o-mini" });
      expect(refused?.status_message).toContain("Incorrect API key");
    } finally {
      await fake.close();
    }
  });
});

describe("observe() on a function that passes a chat request on to an observed client", () => {
  const memory = useMemoryExporter();

  it("keeps the caller a chain, so the model call's tokens count once", async () => {
    const fake = await startFakeOpenAI([{ text: "Bonjour", usage: defaultUsageOf(40, 8) }]);
    try {
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const create = observe(client.chat.completions.create.bind(client.chat.completions));
      // The app's own helper takes the same request and returns the whole completion.
      const ask = observe(async function ask(body: Parameters<typeof create>[0]) {
        return create(body);
      });
      await ask({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello?" }] });
      const spans = memory.exporter.spans();
      const outer = spans.find((span) => span.name === "ask");
      const inner = spans.find((span) => span.name !== "ask");
      expect(inner).toMatchObject({
        kind: "llm",
        model: "gpt-4o-mini",
        usage: { total_tokens: 48 },
      });
      expect(outer).toMatchObject({ kind: "chain", usage: null, cost_usd: null, model: null });
      expect(outer?.attributes["gen_ai.operation.name"]).toBeUndefined();
    } finally {
      await fake.close();
    }
  });

  it("makes the function the llm span when nothing below it is one", async () => {
    const ask = observe(async function ask(_body: { model: string; messages: unknown[] }) {
      return {
        object: "chat.completion",
        model: "gpt-4o-mini",
        choices: [{ message: { role: "assistant", content: "Hi" } }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      };
    });
    await ask({ model: "gpt-4o-mini", messages: [] });
    expect(memory.exporter.spans()[0]).toMatchObject({
      kind: "llm",
      model: "gpt-4o-mini",
      output: "Hi",
      usage: { total_tokens: 6 },
    });
    expect(memory.exporter.spans()[0]?.attributes["gen_ai.operation.name"]).toBe("chat");
  });
});

function defaultUsageOf(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}
