import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createUIMessageStream, createUIMessageStreamResponse, streamText } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../../../test/helpers/fake-openai.js";
import { ChatError } from "./chat-error.js";
import { ChatStore } from "./chat-store.js";
import { createOpenAICompatibleTransport } from "./openai-transport.js";
import type { ChatMessage, ChatStreamPart, ChatTransport, ToolCallPart } from "./types.js";
import { createUIMessageStreamTransport } from "./ui-message-stream-transport.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A local server on 127.0.0.1 whose answer to each POST is a web Response. */
async function serve(
  answer: (body: unknown, request: IncomingMessage) => Response | Promise<Response>,
  raw?: (response: ServerResponse) => void,
): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
    bodies.push(body);
    if (raw !== undefined) {
      raw(response);
      return;
    }
    const web = await answer(body, request);
    response.writeHead(web.status, Object.fromEntries(web.headers));
    if (web.body !== null) {
      for await (const chunk of web.body) {
        if (response.destroyed) break;
        response.write(chunk);
      }
    }
    response.end();
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/chat`, bodies };
}

async function collect(transport: ChatTransport, messages: ChatMessage[] = [user("hi")]) {
  const parts: ChatStreamPart[] = [];
  for await (const part of transport.send(messages, { signal: new AbortController().signal })) {
    parts.push(part);
  }
  return parts;
}

function user(text: string): ChatMessage {
  return { id: `u-${text}`, role: "user", parts: [{ type: "text", text }] };
}

/** Publishes at once (there are no frames in Node). */
function microtask(run: () => void): () => void {
  queueMicrotask(run);
  return () => {};
}

/** Runs one turn through a store, published at once (no frames in Node). */
async function turn(transport: ChatTransport) {
  const store = new ChatStore({ transport, schedule: microtask });
  await store.sendMessage("hello");
  return store;
}

describe("the UI message stream transport", () => {
  it("reads every part an AI SDK UI message stream response carries", async () => {
    const { url, bodies } = await serve(() =>
      createUIMessageStreamResponse({
        stream: createUIMessageStream({
          execute({ writer }) {
            writer.write({ type: "start", messageId: "m-1" });
            writer.write({ type: "start-step" });
            writer.write({ type: "reasoning-start", id: "r" });
            writer.write({ type: "reasoning-delta", id: "r", delta: "Thinking" });
            writer.write({ type: "reasoning-end", id: "r" });
            writer.write({ type: "text-start", id: "t" });
            writer.write({ type: "text-delta", id: "t", delta: "Hello, " });
            writer.write({ type: "text-delta", id: "t", delta: "world" });
            writer.write({ type: "text-end", id: "t" });
            writer.write({ type: "tool-input-start", toolCallId: "c1", toolName: "sandbox.exec" });
            writer.write({ type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"comm' });
            writer.write({
              type: "tool-input-delta",
              toolCallId: "c1",
              inputTextDelta: 'and":"ls"}',
            });
            writer.write({
              type: "tool-input-available",
              toolCallId: "c1",
              toolName: "sandbox.exec",
              input: { command: "ls" },
            });
            writer.write({
              type: "tool-output-available",
              toolCallId: "c1",
              output: { exitCode: 0, stdout: "a.txt\n" },
            });
            writer.write({
              type: "tool-input-available",
              toolCallId: "c2",
              toolName: "search",
              input: { q: "x" },
            });
            writer.write({ type: "tool-output-error", toolCallId: "c2", errorText: "no index" });
            writer.write({ type: "source-url", sourceId: "s1", url: "https://example.com/a" });
            writer.write({
              type: "file",
              url: "https://example.com/a.png",
              mediaType: "image/png",
            });
            writer.write({ type: "data-weather", id: "w", data: { degrees: 20 } });
            writer.write({ type: "data-weather", id: "w", data: { degrees: 21 } });
            writer.write({ type: "finish-step" });
            writer.write({ type: "finish", finishReason: "stop" });
          },
        }),
      }),
    );
    const store = await turn(createUIMessageStreamTransport({ api: url, body: { chatId: "c" } }));
    expect(store.getStatus()).toBe("idle");
    expect(bodies[0]).toMatchObject({ chatId: "c", messages: [{ role: "user" }] });
    const answer = store.getMessages()[1] as ChatMessage;
    expect(answer.id).toBe("m-1");
    expect(answer.parts.filter((part) => part.type !== "step-start")).toEqual([
      { type: "reasoning", text: "Thinking", state: "done" },
      { type: "text", text: "Hello, world", state: "done" },
      {
        type: "dynamic-tool",
        toolCallId: "c1",
        toolName: "sandbox.exec",
        state: "output-available",
        input: { command: "ls" },
        output: { exitCode: 0, stdout: "a.txt\n" },
      },
      {
        type: "dynamic-tool",
        toolCallId: "c2",
        toolName: "search",
        state: "output-error",
        input: { q: "x" },
        errorText: "no index",
      },
      { type: "source-url", sourceId: "s1", url: "https://example.com/a" },
      { type: "file", url: "https://example.com/a.png", mediaType: "image/png" },
      { type: "data-weather", id: "w", data: { degrees: 21 } },
    ]);
  });

  it("reads streamText(...).toUIMessageStreamResponse() of the AI SDK unchanged", async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "1" },
          { type: "text-delta", id: "1", delta: "Streamed " },
          { type: "text-delta", id: "1", delta: "by the SDK" },
          { type: "text-end", id: "1" },
          {
            type: "finish",
            finishReason: { unified: "stop", raw: "stop" },
            usage: {
              inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 },
              outputTokens: { total: 4, text: 4, reasoning: 0 },
            },
          },
        ]),
      }),
    });
    const { url } = await serve(() =>
      streamText({ model, prompt: "hello" }).toUIMessageStreamResponse({
        messageMetadata: ({ part }) =>
          part.type === "finish"
            ? {
                usage: {
                  inputTokens: part.totalUsage.inputTokens,
                  outputTokens: part.totalUsage.outputTokens,
                },
                model: "mock",
              }
            : undefined,
      }),
    );
    const usages: unknown[] = [];
    const store = new ChatStore({
      transport: createUIMessageStreamTransport({ api: url }),
      schedule: microtask,
      tracer: {
        startTurn: () => ({
          llm: (usage, modelName) => usages.push({ usage, modelName }),
          end: () => usages.push("end"),
          fail: () => usages.push("fail"),
        }),
      },
    });
    await store.sendMessage("hello");
    const answer = store.getMessages()[1] as ChatMessage;
    expect(answer.parts.find((part) => part.type === "text")).toMatchObject({
      text: "Streamed by the SDK",
    });
    expect(usages).toEqual([
      { usage: { inputTokens: 5, outputTokens: 4 }, modelName: "mock" },
      "end",
    ]);
  });

  it("reports an error part and a non-success answer as errors the user can retry", async () => {
    const failing = await serve(() =>
      createUIMessageStreamResponse({
        stream: createUIMessageStream({
          execute() {
            throw new Error("model overloaded");
          },
          onError: () => "The model is overloaded.",
        }),
      }),
    );
    const store = await turn(createUIMessageStreamTransport({ api: failing.url }));
    expect(store.getStatus()).toBe("error");
    expect(store.getError()?.code).toBe("stream_error");
    expect(store.getError()?.message).toBe("The model is overloaded.");

    const refused = await serve(() => new Response("nope", { status: 503 }));
    const second = await turn(createUIMessageStreamTransport({ api: refused.url }));
    expect(second.getError()).toMatchObject({ code: "http_error", status: 503 });
  });

  it("calls a stream that ends before [DONE] a dropped connection", async () => {
    const { url } = await serve(
      () => new Response(),
      (response) => {
        response.writeHead(200, {
          "content-type": "text/event-stream",
          "x-vercel-ai-ui-message-stream": "v1",
        });
        response.write('data: {"type":"start"}\n\n');
        response.write('data: {"type":"text-start","id":"t"}\n\n');
        // Flushed first, so the client reads the half answer before the connection goes.
        response.write('data: {"type":"text-delta","id":"t","delta":"Half an ans"}\n\n', () =>
          setTimeout(() => response.destroy(), 20),
        );
      },
    );
    const store = await turn(createUIMessageStreamTransport({ api: url }));
    expect(store.getStatus()).toBe("error");
    expect(ChatError.isInstance(store.getError())).toBe(true);
    expect(store.getError()?.code).toBe("connection_dropped");
    expect(store.getMessages()[1]?.parts).toEqual([
      { type: "text", text: "Half an ans", state: "done" },
    ]);
  });

  it("aborts the request for real when the user stops, and says stopped", async () => {
    let closed: Promise<unknown> | undefined;
    const { url } = await serve(
      () => new Response(),
      (response) => {
        closed = once(response, "close");
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write('data: {"type":"start"}\n\n');
        response.write('data: {"type":"text-start","id":"t"}\n\n');
        response.write('data: {"type":"text-delta","id":"t","delta":"Never ending"}\n\n');
      },
    );
    const store = new ChatStore({
      transport: createUIMessageStreamTransport({ api: url }),
      schedule: microtask,
    });
    const done = store.sendMessage("hello");
    await new Promise<void>((resolve) => {
      const unsubscribe = store.subscribeMessageIds(() => {
        if (store.getMessageIds().length === 2) {
          unsubscribe();
          resolve();
        }
      });
    });
    store.stop();
    await done;
    expect(store.getStatus()).toBe("stopped");
    expect(store.getError()).toBeUndefined();
    await closed; // the server saw the connection go
  });
});

describe("the OpenAI-compatible transport", () => {
  it("streams text and reports the usage chunk", async () => {
    const fake = await startFakeOpenAI([
      {
        text: "Hello from a compatible server",
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      },
    ]);
    try {
      const transport = createOpenAICompatibleTransport({
        baseURL: fake.baseURL,
        model: "gpt-test",
        apiKey: "sk-test",
        system: "Be brief.",
      });
      const parts = await collect(transport);
      const body = fake.requests[0]?.body as Record<string, unknown>;
      expect(body).toMatchObject({
        model: "gpt-test",
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
      });
      expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-test");
      const text = parts
        .flatMap((part) => (part.type === "text-delta" ? [part.delta] : []))
        .join("");
      expect(text).toBe("Hello from a compatible server");
      expect(parts).toContainEqual({
        type: "message-metadata",
        messageMetadata: {
          usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
          model: "gpt-test",
        },
      });
      expect(parts.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    } finally {
      await fake.close();
    }
  });

  it("assembles streamed tool calls by index and sends their results back", async () => {
    const fake = await startFakeOpenAI([
      {
        toolCalls: [
          { id: "call_a", name: "sandbox.exec", arguments: '{"command":"ls","args":["-la"]}' },
          { id: "call_b", name: "search", arguments: '{"q":"cairn"}' },
        ],
      },
    ]);
    try {
      const store = await turn(
        createOpenAICompatibleTransport({ baseURL: fake.baseURL, model: "m" }),
      );
      const tools = (store.getMessages()[1]?.parts ?? []).filter(
        (part): part is ToolCallPart => part.type === "dynamic-tool",
      );
      expect(tools).toEqual([
        {
          type: "dynamic-tool",
          toolCallId: "call_a",
          toolName: "sandbox.exec",
          state: "input-available",
          input: { command: "ls", args: ["-la"] },
        },
        {
          type: "dynamic-tool",
          toolCallId: "call_b",
          toolName: "search",
          state: "input-available",
          input: { q: "cairn" },
        },
      ]);
    } finally {
      await fake.close();
    }
  });

  it("sends tool calls and their outputs as chat-completions messages", async () => {
    const fake = await startFakeOpenAI([{ text: "done" }]);
    try {
      const transport = createOpenAICompatibleTransport({ baseURL: fake.baseURL, model: "m" });
      await collect(transport, [
        user("list files"),
        {
          id: "a",
          role: "assistant",
          parts: [
            {
              type: "dynamic-tool",
              toolCallId: "call_a",
              toolName: "sandbox.exec",
              state: "output-available",
              input: { command: "ls" },
              output: { exitCode: 0 },
            },
          ],
        },
      ]);
      expect((fake.requests[0]?.body as { messages: unknown } | undefined)?.messages).toEqual([
        { role: "user", content: "list files" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_a",
              type: "function",
              function: { name: "sandbox.exec", arguments: '{"command":"ls"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_a", content: '{"exitCode":0}' },
      ]);
    } finally {
      await fake.close();
    }
  });

  it("maps a refusal to an http error", async () => {
    const fake = await startFakeOpenAI([{ status: 401 }]);
    try {
      const store = await turn(
        createOpenAICompatibleTransport({ baseURL: fake.baseURL, model: "m", apiKey: "bad" }),
      );
      expect(store.getError()).toMatchObject({ code: "http_error", status: 401 });
    } finally {
      await fake.close();
    }
  });
});

describe("a traced turn's request", () => {
  it("carries the traceparent the tracer gives, with either transport", async () => {
    const traceparent = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01";
    const tracer = {
      startTurn: () => ({
        traceparent: async () => traceparent,
        llm() {},
        end() {},
        fail() {},
      }),
    };
    const headers: Array<string | undefined> = [];
    const { url } = await serve((_body, request) => {
      headers.push(request.headers.traceparent as string | undefined);
      return createUIMessageStreamResponse({
        stream: createUIMessageStream({
          execute: ({ writer }) => {
            writer.write({ type: "text-start", id: "t" });
            writer.write({ type: "text-delta", id: "t", delta: "ok" });
            writer.write({ type: "text-end", id: "t" });
          },
        }),
      });
    });
    const store = new ChatStore({
      transport: createUIMessageStreamTransport({ api: url }),
      schedule: microtask,
      tracer,
    } as ConstructorParameters<typeof ChatStore>[0]);
    await store.sendMessage("hello");
    expect(headers).toEqual([traceparent]);

    const sent: Array<string | null> = [];
    const openai = createOpenAICompatibleTransport({
      baseURL: "http://openai.test/v1",
      model: "m",
      fetch: async (_input: RequestInfo | URL, init?: RequestInit) => {
        sent.push(new Headers(init?.headers).get("traceparent"));
        return new Response("data: [DONE]\n\n", {
          headers: { "content-type": "text/event-stream" },
        });
      },
    } as Parameters<typeof createOpenAICompatibleTransport>[0]);
    await new ChatStore({ transport: openai, schedule: microtask, tracer } as ConstructorParameters<
      typeof ChatStore
    >[0]).sendMessage("hello");
    expect(sent).toEqual([traceparent]);
  });
});
