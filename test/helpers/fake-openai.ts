import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What the fake answers to the next chat-completions request. */
export type FakeStep =
  /** A 200 whose message content is this object, as JSON. */
  | { json: unknown; usage?: FakeUsage }
  /** A 200 whose message content is this raw text (for malformed answers). */
  | { text: string; usage?: FakeUsage }
  /** A 200 with exactly this body (for answers without choices, say). */
  | { completion: unknown }
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
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key" },
  402: { type: "billing_error", code: "insufficient_credit", message: "Insufficient credit" },
  404: { type: "invalid_request_error", code: "model_not_found", message: "Model not found" },
  429: { type: "rate_limit_error", code: "rate_limit_exceeded", message: "Rate limit reached" },
};

/**
 * A local OpenAI-compatible chat-completions server on 127.0.0.1 that answers each POST to
 * `/v1/chat/completions` (or `/chat/completions`) with the next step of `script`, and 500 once
 * the script has run out, so that a test making more requests than it planned notices.
 */
export async function startFakeOpenAI(script: readonly FakeStep[]): Promise<FakeOpenAI> {
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
      if (request.method !== "POST" || !/^(\/v1)?\/chat\/completions$/.test(path)) {
        send(404, {
          error: {
            message: `the fake serves POST /v1/chat/completions, not ${request.method} ${path}`,
          },
        });
        return;
      }
      const step = steps.shift();
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
      const model = (body as { model?: unknown } | undefined)?.model;
      sequence++;
      send(200, {
        id: `chatcmpl-fake-${sequence}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: typeof model === "string" ? model : "fake-model",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "json" in step ? JSON.stringify(step.json) : step.text,
              refusal: null,
            },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage: step.usage ?? defaultUsage,
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
