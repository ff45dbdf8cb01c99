// One streamed call to `${baseURL}/chat/completions`: sends the history and the tools, passes
// text and reasoning deltas on as they come, and assembles the tool calls (their deltas arrive
// by index, the arguments in pieces).

import type { IncomingMessage } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import {
  type AgentToolDescriptor,
  isWholeCount,
  type OpenAIChatMessage,
  type OpenAIToolCall,
} from "../protocol.js";
import { ModelCallError } from "./model-call-error.js";
import { errorMessage } from "./output.js";
import { ConnectError, openRequest } from "./proxy-request.js";
import { serverSentEvents } from "./server-sent-events.js";

export interface ChatCompletionRequest {
  baseURL: string;
  model: string;
  /** The Authorization value's token: the sealed placeholder, passed as it is. */
  apiKey?: string;
  messages: OpenAIChatMessage[];
  tools: AgentToolDescriptor[];
  signal: AbortSignal;
  env: NodeJS.ProcessEnv;
  onText(delta: string): void;
  onReasoning(delta: string): void;
}

export interface ChatCompletionStep {
  model: string;
  text: string;
  toolCalls: OpenAIToolCall[];
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number };
}

/** The most of an error body the core reads. */
const errorBodyLimit = 64 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readLimited(response: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      response.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

/** The message of an error body: OpenAI's {error: {message}}, Cairn's {error, message}, or text. */
export function errorBodyMessage(body: string): string {
  try {
    const json: unknown = JSON.parse(body);
    if (isRecord(json)) {
      if (isRecord(json.error) && typeof json.error.message === "string") return json.error.message;
      if (typeof json.message === "string") return json.message;
      if (typeof json.error === "string") return json.error;
      if (typeof json.detail === "string") return json.detail;
    }
  } catch {
    // Not JSON: the text itself.
  }
  const text = body.trim().replace(/\s+/g, " ");
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/**
 * The egress proxy's name in Proxy-Status (src/sandbox/runner/egress/proxy.ts, which the core,
 * built alone, cannot import).
 */
const egressProxyName = "cairn-egress";

/** The members of a Proxy-Status list (RFC 9209), split at the commas outside quoted strings. */
function proxyStatusMembers(header: string): string[] {
  const members: string[] = [];
  let current = "";
  let quoted = false;
  for (let index = 0; index < header.length; index++) {
    const char = header[index] as string;
    if (quoted && char === "\\") {
      current += char + (header[index + 1] ?? "");
      index++;
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === "," && !quoted) {
      members.push(current.trim());
      current = "";
    } else current += char;
  }
  members.push(current.trim());
  return members;
}

/**
 * The RFC 9209 error type when the sandbox's egress proxy made this answer itself: the last
 * member of Proxy-Status is the proxy's, with an `error`. An answer the proxy relayed ends with
 * its member without one (`received-status`), whatever the upstream put before it.
 */
export function egressRefusal(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const last = proxyStatusMembers(Array.isArray(header) ? header.join(", ") : header).at(-1);
  const [name, ...parameters] = (last ?? "").split(";").map((part) => part.trim());
  if (name !== egressProxyName) return undefined;
  const error = parameters.find((parameter) => parameter.startsWith("error="));
  return error?.slice("error=".length);
}

/**
 * The egress proxy's own answer: a refusal (4xx), which trying again cannot mend, is `other`
 * with what to check; a failure to reach the host (5xx) is transient. Neither has a status:
 * the model never answered.
 */
function egressFailure(status: number, host: string, detail: string): ModelCallError {
  if (status >= 400 && status < 500) {
    return new ModelCallError(
      `the sandbox's egress proxy refused the request to ${host}${detail === "" ? "" : `: ${detail}`}. Is the model's host named with --egress-host, or on the secret store's allowlist?`,
      "other",
      undefined,
      true,
    );
  }
  return new ModelCallError(
    `the sandbox's egress proxy answered ${status}${detail === "" ? "" : `: ${detail}`}`,
    "transient",
    undefined,
    true,
  );
}

async function failedResponse(response: IncomingMessage, url: URL): Promise<ModelCallError> {
  const status = response.statusCode ?? 0;
  const body = await readLimited(response, errorBodyLimit).catch(() => "");
  const detail = errorBodyMessage(body);
  if (egressRefusal(response.headers["proxy-status"]) !== undefined) {
    return egressFailure(status, url.hostname, detail);
  }
  const message = `the model endpoint answered ${status}${detail === "" ? "" : `: ${detail}`}`;
  return status >= 400 && status < 500
    ? new ModelCallError(message, "upstream_4xx", status)
    : new ModelCallError(message, "transient", status);
}

const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/** Whether a failure to connect is worth one more try. */
function isRetryable(error: unknown): boolean {
  return (
    error instanceof ConnectError &&
    (error.proxyStatus === undefined
      ? networkCodes.has(error.code ?? "")
      : error.proxyStatus === 502 || error.proxyStatus === 503 || error.proxyStatus === 504)
  );
}

function connectFailure(error: ConnectError, url: URL): ModelCallError {
  // A CONNECT the proxy did not open: its answer is always the proxy's own.
  if (error.proxyStatus !== undefined) {
    return egressFailure(error.proxyStatus, url.hostname, error.proxyDetail ?? "");
  }
  return new ModelCallError(
    error.message,
    networkCodes.has(error.code ?? "") ? "transient" : "other",
  );
}

class ToolCallAssembler {
  private readonly calls = new Map<number, OpenAIToolCall>();

  add(deltas: unknown): void {
    if (!Array.isArray(deltas)) return;
    for (const [position, delta] of deltas.entries()) {
      if (!isRecord(delta)) continue;
      const index = typeof delta.index === "number" ? delta.index : position;
      let call = this.calls.get(index);
      if (call === undefined) {
        call = { id: "", type: "function", function: { name: "", arguments: "" } };
        this.calls.set(index, call);
      }
      if (typeof delta.id === "string" && delta.id !== "") call.id = delta.id;
      const fn = isRecord(delta.function) ? delta.function : {};
      if (typeof fn.name === "string") call.function.name += fn.name;
      if (typeof fn.arguments === "string") call.function.arguments += fn.arguments;
    }
  }

  /** The calls in index order; a call the server gave no id gets one. */
  result(prefix: string): OpenAIToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => (call.id === "" ? { ...call, id: `${prefix}_${index}` } : call));
  }
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Reads a completion: the SSE chunks, or one JSON body from a server that does not stream. */
async function readCompletion(
  response: IncomingMessage,
  request: ChatCompletionRequest,
  callPrefix: string,
): Promise<ChatCompletionStep> {
  const step: ChatCompletionStep = {
    model: request.model,
    text: "",
    toolCalls: [],
    finishReason: "unknown",
    usage: { promptTokens: 0, completionTokens: 0 },
  };
  const toolCalls = new ToolCallAssembler();
  const take = (chunk: unknown) => {
    if (!isRecord(chunk)) return;
    if (chunk.error !== undefined) {
      throw new ModelCallError(
        `the model endpoint sent an error: ${errorBodyMessage(JSON.stringify(chunk))}`,
        "transient",
      );
    }
    if (typeof chunk.model === "string" && chunk.model !== "") step.model = chunk.model;
    if (isRecord(chunk.usage)) {
      const { prompt_tokens: prompt, completion_tokens: completion } = chunk.usage;
      // Whole counts only: the service refuses an llm event whose counts are not.
      if (isWholeCount(prompt)) step.usage.promptTokens = prompt;
      if (isWholeCount(completion)) step.usage.completionTokens = completion;
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) return;
    const delta = isRecord(choice.delta)
      ? choice.delta
      : isRecord(choice.message)
        ? choice.message
        : {};
    const reasoning = textOf(delta.reasoning_content) || textOf(delta.reasoning);
    if (reasoning !== "") request.onReasoning(reasoning);
    const text = textOf(delta.content);
    if (text !== "") {
      step.text += text;
      request.onText(text);
    }
    toolCalls.add(delta.tool_calls);
    if (typeof choice.finish_reason === "string") step.finishReason = choice.finish_reason;
  };
  if (/^application\/json/i.test(response.headers["content-type"] ?? "")) {
    const body = await readLimited(response, 16 * 1024 * 1024);
    try {
      take(JSON.parse(body));
    } catch (error) {
      if (error instanceof ModelCallError) throw error;
      throw new ModelCallError(
        "the model endpoint answered with JSON that does not parse",
        "other",
      );
    }
  } else {
    for await (const data of serverSentEvents(response)) {
      if (data === "[DONE]") break;
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ModelCallError(
          `the model endpoint sent an event that is not JSON: ${data.slice(0, 200)}`,
          "other",
        );
      }
      take(chunk);
    }
  }
  step.toolCalls = toolCalls.result(callPrefix);
  return step;
}

/**
 * Calls the model once. Throws `ModelCallError`; a failure to connect is thrown as the
 * `ConnectError` itself, so that `callModel` may retry it.
 */
async function chatCompletion(
  request: ChatCompletionRequest,
  callPrefix: string,
): Promise<ChatCompletionStep> {
  const url = new URL(`${request.baseURL.replace(/\/+$/, "")}/chat/completions`);
  const body = JSON.stringify({
    model: request.model,
    messages: request.messages,
    ...(request.tools.length === 0
      ? {}
      : { tools: request.tools.map((tool) => ({ type: "function", function: tool })) }),
    stream: true,
    stream_options: { include_usage: true },
  });
  const response = await openRequest(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream, application/json",
      ...(request.apiKey === undefined ? {} : { authorization: `Bearer ${request.apiKey}` }),
    },
    body,
    signal: request.signal,
    env: request.env,
  });
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) throw await failedResponse(response, url);
  try {
    return await readCompletion(response, request, callPrefix);
  } catch (error) {
    if (error instanceof ModelCallError || request.signal.aborted) throw error;
    throw new ModelCallError(`the model's stream broke off: ${errorMessage(error)}`, "transient");
  } finally {
    response.destroy();
  }
}

/** Waited before the one retry of a call that could not connect. */
export const retryDelayMs = 1000;

/**
 * Calls the model: one retry, after `retryDelayMs`, when it could not connect (nothing was
 * sent, so nothing is said twice). Throws `ModelCallError`, or the abort reason.
 */
export async function callModel(
  request: ChatCompletionRequest,
  callPrefix: string,
): Promise<ChatCompletionStep> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await chatCompletion(request, callPrefix);
    } catch (error) {
      if (request.signal.aborted || !(error instanceof ConnectError)) throw error;
      if (attempt > 1 || !isRetryable(error)) {
        throw connectFailure(error, new URL(request.baseURL));
      }
      await delay(retryDelayMs, undefined, { signal: request.signal });
    }
  }
}
