import { once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** A tool call the fake's answer makes. */
export interface FakeToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text, as OpenAI sends them. */
  arguments: string;
}

/** What the fake answers to the next chat-completions request. */
export type FakeStep =
  /** A 200 whose message content is this object, as JSON. */
  | { json: unknown; usage?: FakeUsage }
  /** A 200 whose message content is this raw text (for malformed answers). */
  | { text: string; usage?: FakeUsage }
  /** A 200 with exactly this body (for answers without choices, say). */
  | { completion: unknown }
  /** A 200 whose message calls tools (finish_reason "tool_calls"), with optional text. */
  | { toolCalls: FakeToolCall[]; text?: string; usage?: FakeUsage }
  /**
   * An error status. Without `retryAfter` (seconds, sent as `Retry-After`) the fake sends
   * `retry-after-ms: 10`, which the openai client honours, so that retries do not wait for its
   * default backoff of 0.5 to 8 s; pass `retryAfterMs: null` to send no retry header at all.
   */
  | {
      status: number;
      retryAfter?: number;
      retryAfterMs?: number | null;
      body?: unknown;
      headers?: Record<string, string>;
    };

/** A step, or what makes it from the request (an answer that quotes what the request carried). */
export type FakeScriptStep = FakeStep | ((request: FakeRequest) => FakeStep);

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The request body, parsed as JSON (undefined if it was not JSON). */
  body: unknown;
  /** When the request arrived, Date.now(). */
  receivedAt: number;
}

export interface FakeOpenAI {
  /** Base URL to give the client: `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string;
  /** Every request received, in arrival order. */
  readonly requests: FakeRequest[];
  close(): Promise<void>;
}

export const defaultUsage: FakeUsage = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
};

const errorMessages: Record<number, { type: string; code: string | null; message: string }> = {
  400: {
    type: "invalid_request_error",
    code: "invalid_value",
    message: "Invalid value for 'messages': the request is not valid",
  },
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key" },
  402: { type: "billing_error", code: "insufficient_credit", message: "Insufficient credit" },
  404: { type: "invalid_request_error", code: "model_not_found", message: "Model not found" },
  429: { type: "rate_limit_error", code: "rate_limit_exceeded", message: "Rate limit reached" },
};

export interface FakeOpenAIOptions {
  /** Milliseconds between the chunks of a streamed answer. Default 0. */
  readonly chunkDelayMs?: number;
}

/**
 * A local OpenAI-compatible chat-completions server on 127.0.0.1 that answers each POST to
 * `/v1/chat/completions` (or `/chat/completions`) with the next step of `script`, and 500 once
 * the script has run out, so that a test making more requests than it planned notices. A
 * request with `stream: true` gets the answer as OpenAI streams it (server-sent events, the
 * content in several deltas, and a usage chunk when `stream_options.include_usage` is set).
 * `POST /v1/embeddings` answers without using the script: small deterministic vectors.
 */
export async function startFakeOpenAI(
  script: readonly FakeScriptStep[],
  options: FakeOpenAIOptions = {},
): Promise<FakeOpenAI> {
  const steps = [...script];
  const requests: FakeRequest[] = [];
  let sequence = 0;
  const server: Server = createServer((request, response) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const path = request.url ?? "";
      requests.push({
        method: request.method ?? "",
        path,
        headers: request.headers,
        body,
        receivedAt,
      });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(payload));
      };
      if (request.method === "POST" && /^(\/v1)?\/embeddings$/.test(path)) {
        send(200, embeddingsAnswer(body));
        return;
      }
      if (request.method !== "POST" || !/^(\/v1)?\/chat\/completions$/.test(path)) {
        send(404, {
          error: {
            message: `the fake serves POST /v1/chat/completions, not ${request.method} ${path}`,
          },
        });
        return;
      }
      const next = steps.shift();
      const step =
        typeof next === "function" ? next(requests[requests.length - 1] as FakeRequest) : next;
      if (step === undefined) {
        send(
          500,
          { error: { message: `the fake's script ran out at request ${requests.length}` } },
          { "retry-after-ms": "10" },
        );
        return;
      }
      if ("status" in step) {
        const headers: Record<string, string> = { ...step.headers };
        if (step.retryAfter !== undefined) headers["retry-after"] = String(step.retryAfter);
        else if (step.retryAfterMs !== null)
          headers["retry-after-ms"] = String(step.retryAfterMs ?? 10);
        const known = errorMessages[step.status];
        const message = known ?? { type: "server_error", code: null, message: "Internal error" };
        const authorization = String(request.headers.authorization ?? "");
        // Like OpenAI's, the refusal of a key quotes it, so tests can check it is not passed on.
        const quoted =
          step.status === 401
            ? `${message.message} provided: ${authorization.replace(/^Bearer /, "")}`
            : message.message;
        send(
          step.status,
          step.body ?? { error: { ...message, message: quoted, param: null } },
          headers,
        );
        return;
      }
      if ("completion" in step) {
        send(200, step.completion);
        return;
      }
      const requested = body as
        | { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } }
        | undefined;
      const model = typeof requested?.model === "string" ? requested.model : "fake-model";
      sequence++;
      const answer: Answer = {
        id: `chatcmpl-fake-${sequence}`,
        model,
        created: Math.floor(Date.now() / 1000),
        content:
          "toolCalls" in step
            ? (step.text ?? null)
            : "json" in step
              ? JSON.stringify(step.json)
              : step.text,
        toolCalls: "toolCalls" in step ? step.toolCalls : [],
        usage: step.usage ?? defaultUsage,
      };
      if (requested?.stream === true) {
        void stream(
          response,
          answer,
          requested.stream_options?.include_usage === true,
          options.chunkDelayMs ?? 0,
        );
        return;
      }
      send(200, {
        id: answer.id,
        object: "chat.completion",
        created: answer.created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: answer.content,
              refusal: null,
              ...(answer.toolCalls.length === 0
                ? {}
                : { tool_calls: answer.toolCalls.map(toolCallOf) }),
            },
            logprobs: null,
            finish_reason: answer.toolCalls.length === 0 ? "stop" : "tool_calls",
          },
        ],
        usage: answer.usage,
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Answer {
  id: string;
  model: string;
  created: number;
  content: string | null;
  toolCalls: FakeToolCall[];
  usage: FakeUsage;
}

function toolCallOf(call: FakeToolCall) {
  return {
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  };
}

// OpenAI's stream: a role chunk, the content in pieces of a few characters, tool calls (each
// in two deltas: the call, then its arguments), a finish chunk, the usage chunk, [DONE].
async function stream(
  response: ServerResponse,
  answer: Answer,
  includeUsage: boolean,
  delayMs: number,
): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: unknown, finish: string | null = null, usage: FakeUsage | null = null) => ({
    id: answer.id,
    object: "chat.completion.chunk",
    created: answer.created,
    model: answer.model,
    choices:
      delta === undefined ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage } : {}),
  });
  const events: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of (answer.content ?? "").match(/.{1,6}/gsu) ?? []) {
    events.push(chunk({ content: piece }));
  }
  for (const [index, call] of answer.toolCalls.entries()) {
    events.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    events.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
  }
  events.push(chunk({}, answer.toolCalls.length === 0 ? "stop" : "tool_calls"));
  if (includeUsage) events.push(chunk(undefined, null, answer.usage));
  for (const event of events) {
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(event)}\n\n`);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  response.end("data: [DONE]\n\n");
}

// Each input text gets a 4-number vector made from its characters; usage counts words.
function embeddingsAnswer(body: unknown) {
  const request = body as { model?: unknown; input?: unknown } | undefined;
  const inputs = Array.isArray(request?.input) ? request.input : [request?.input ?? ""];
  const texts = inputs.map((each) => String(each));
  const tokens = texts.reduce((sum, text) => sum + Math.max(1, text.split(/\s+/).length), 0);
  return {
    object: "list",
    model: typeof request?.model === "string" ? request.model : "fake-embedding",
    data: texts.map((text, index) => ({
      object: "embedding",
      index,
      embedding: [0, 1, 2, 3].map(
        (offset) => ((text.charCodeAt(offset % Math.max(1, text.length)) || 0) % 97) / 97,
      ),
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
