import { readEnv } from "../../core/env.js";
import {
  ApiRequestError,
  ConfigurationError,
  SandboxCapacityError,
  SandboxLimitError,
  SandboxNotFoundError,
  SandboxUnavailableError,
} from "../../core/errors/index.js";

/** Where the Cairn service is. Default: `CAIRN_ENDPOINT` and `CAIRN_API_KEY`. */
export interface SandboxConnection {
  readonly endpoint?: string;
  readonly apiKey?: string;
}

export interface ResolvedConnection {
  readonly endpoint: string;
  readonly apiKey: string | undefined;
}

export function resolveConnection(connection: SandboxConnection = {}): ResolvedConnection {
  const endpoint = connection.endpoint ?? readEnv("CAIRN_ENDPOINT");
  if (endpoint === undefined) {
    throw new ConfigurationError(
      "no Cairn service to run sandboxes on: pass { endpoint, apiKey } or set CAIRN_ENDPOINT and CAIRN_API_KEY",
    );
  }
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    apiKey: connection.apiKey ?? readEnv("CAIRN_API_KEY"),
  };
}

/**
 * Calls the sandbox API and returns the response. Errors become typed: a sandbox that does not
 * exist → SandboxNotFoundError; one that is not running (409) or a runner that is unavailable
 * (503) → SandboxUnavailableError; anything else → ApiRequestError with the service's message.
 */
export async function sandboxRequest(
  connection: ResolvedConnection,
  method: string,
  path: string,
  options: {
    json?: unknown;
    body?: BodyInit;
    sandboxId?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (connection.apiKey !== undefined) headers["x-api-key"] = connection.apiKey;
  let body = options.body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  let response: Response;
  try {
    response = await fetch(`${connection.endpoint}${path}`, {
      method,
      headers,
      // No redirects: fetch would otherwise keep every chunk of a streamed upload in memory,
      // in case it had to send the body again.
      redirect: "error",
      ...(body === undefined ? {} : { body, duplex: "half" }),
    } as RequestInit);
  } catch (cause) {
    throw new ApiRequestError(
      "unreachable",
      `could not reach the Cairn service at ${connection.endpoint}: ${cause instanceof Error ? cause.message : String(cause)}`,
      0,
      { cause },
    );
  }
  if (response.ok) return response;
  const text = await response.text();
  let error: { error?: string; message?: string } = {};
  try {
    error = JSON.parse(text) as typeof error;
  } catch {
    // Not the service's error body.
  }
  const message =
    error.message ?? `the Cairn service answered ${response.status} to ${method} ${path}`;
  if (response.status === 404 && options.sandboxId !== undefined && /no sandbox/.test(message)) {
    throw new SandboxNotFoundError(options.sandboxId);
  }
  // 409 "sandbox … is stopped/expired/failed/stopping": the sandbox cannot take work.
  const ended = /is (stopped|expired|failed|stopping)\b/.exec(message)?.[1];
  if (response.status === 409 && options.sandboxId !== undefined && ended !== undefined) {
    const reason = ended === "stopping" ? "stopped" : (ended as "stopped" | "expired" | "failed");
    throw new SandboxUnavailableError({
      reason,
      sandboxId: options.sandboxId,
      cause: new Error(message),
    });
  }
  const retryAfter = Number(response.headers.get("retry-after")) || undefined;
  if (error.error === "limit_exceeded") throw new SandboxLimitError(message, { retryAfter });
  if (error.error === "capacity_exceeded") throw new SandboxCapacityError(message, { retryAfter });
  if (response.status === 503) {
    throw new SandboxUnavailableError({ reason: "runner_unavailable", cause: new Error(message) });
  }
  throw new ApiRequestError(error.error ?? "http_error", message, response.status);
}

export async function sandboxJson<T>(
  connection: ResolvedConnection,
  method: string,
  path: string,
  options: { json?: unknown; sandboxId?: string } = {},
): Promise<T> {
  const response = await sandboxRequest(connection, method, path, options);
  return (await response.json()) as T;
}
