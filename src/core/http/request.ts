// The one HTTP request helper of the SDK clients and the CLI: the API key, a timeout and the
// caller's AbortSignal on every call, error answers as the classes of core/errors, and JSON
// answers parsed against their wire schema. Uses the global fetch (Node, browsers).
import type { ZodType } from "zod";
import type { ServiceConnection } from "../config.js";
import { ApiRequestError } from "../errors/api-request-error.js";
import { errorFromAnswer } from "./error-answer.js";

export interface ServiceRequest {
  readonly method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path and query, from the service's root: `/api/sandboxes?tag=a`. */
  readonly path: string;
  /** A body sent as JSON. */
  readonly json?: unknown;
  /** A body sent as it is (a stream is sent without being held in memory). */
  readonly body?: BodyInit;
  readonly headers?: Readonly<Record<string, string>>;
  /** Cancels the call: it rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long the service has to answer, in ms (default 30000; 0 for no limit). For
   * {@link callService} the limit ends when the headers arrive, not with the body.
   */
  readonly timeoutMs?: number | undefined;
}

const defaultTimeoutMs = 30_000;

/**
 * Calls the service and returns its answer when it is a success, for a caller that reads the
 * body itself (a download, a stream). An error answer throws the error its code means.
 */
export async function callService(
  connection: ServiceConnection,
  request: ServiceRequest,
): Promise<Response> {
  const deadline = new Deadline(request);
  try {
    return await send(connection, request, deadline);
  } finally {
    deadline.clear();
  }
}

/** Calls the service and returns its JSON answer, checked against `schema`. */
export async function requestJson<T>(
  connection: ServiceConnection,
  request: ServiceRequest & { readonly schema: ZodType<T> },
): Promise<T> {
  const deadline = new Deadline(request);
  try {
    const response = await send(connection, request, deadline);
    const text = await deadline.guard(() => response.text(), request);
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw invalidAnswer(request, response.status, "it is not JSON");
    }
    const parsed = request.schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where =
        issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
      throw invalidAnswer(request, response.status, `${issue?.message ?? "unexpected"}${where}`);
    }
    return parsed.data;
  } finally {
    deadline.clear();
  }
}

async function send(
  connection: ServiceConnection,
  request: ServiceRequest,
  deadline: Deadline,
): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  if (connection.apiKey !== undefined) headers["x-api-key"] = connection.apiKey;
  else if (connection.token !== undefined) headers.authorization = `Bearer ${connection.token}`;
  let body = request.body;
  if (request.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(request.json);
  }
  const response = await deadline.guard(
    () =>
      fetch(`${connection.endpoint}${request.path}`, {
        method: request.method,
        headers,
        signal: deadline.signal,
        // No redirects: fetch would otherwise keep every chunk of a streamed upload in memory,
        // in case it had to send the body again.
        redirect: "error",
        ...(body === undefined ? {} : { body, duplex: "half" }),
      } as RequestInit),
    request,
    connection,
  );
  if (response.ok) return response;
  throw await errorOf(response, request);
}

async function errorOf(response: Response, request: ServiceRequest): Promise<Error> {
  const text = await response.text().catch(() => "");
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // Not the service's error body (a proxy's page, say): the status speaks for it.
  }
  const retryAfter = Number(response.headers.get("retry-after")) || undefined;
  return errorFromAnswer({
    status: response.status,
    code: typeof body.error === "string" ? body.error : "http_error",
    message:
      typeof body.message === "string"
        ? body.message
        : `the Cairn service answered ${response.status} to ${request.method} ${pathOnly(request)}`,
    body,
    retryAfter,
  });
}

function invalidAnswer(request: ServiceRequest, status: number, why: string): ApiRequestError {
  return new ApiRequestError(
    "invalid_response",
    `the Cairn service answered ${request.method} ${pathOnly(request)} with a body this client does not understand (${why}); are the service and the client the same version?`,
    status,
  );
}

function pathOnly(request: ServiceRequest): string {
  return request.path.replace(/\?.*$/, "");
}

/** The caller's signal and the timeout, as one signal, and the errors each abort means. */
class Deadline {
  readonly signal: AbortSignal;
  private readonly timedOut = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly request: ServiceRequest) {
    const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
    this.timer = timeoutMs > 0 ? setTimeout(() => this.timedOut.abort(), timeoutMs) : undefined;
    this.signal =
      request.signal === undefined
        ? this.timedOut.signal
        : AbortSignal.any([request.signal, this.timedOut.signal]);
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Runs a step of the call; an abort becomes the caller's reason or a timeout error. */
  async guard<T>(
    step: () => Promise<T>,
    request: ServiceRequest,
    connection?: ServiceConnection,
  ): Promise<T> {
    try {
      return await step();
    } catch (cause) {
      if (this.request.signal?.aborted === true) throw this.request.signal.reason;
      if (this.timedOut.signal.aborted) {
        throw new ApiRequestError(
          "timeout",
          `the Cairn service did not answer ${request.method} ${pathOnly(request)} within ${(request.timeoutMs ?? defaultTimeoutMs) / 1000} s`,
          0,
          { cause },
        );
      }
      if (connection === undefined) throw cause;
      throw new ApiRequestError(
        "unreachable",
        `could not reach the Cairn service at ${connection.endpoint}: ${cause instanceof Error ? causeText(cause) : String(cause)}`,
        0,
        { cause },
      );
    }
  }
}

/** fetch's "fetch failed" says nothing; its cause says what (ECONNREFUSED, a DNS failure). */
function causeText(error: Error): string {
  const inner = (error as { cause?: unknown }).cause;
  return inner instanceof Error && inner.message !== "" ? inner.message : error.message;
}
