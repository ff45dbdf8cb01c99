import { ApiRequestError, ConfigurationError } from "../../core/errors/index.js";
import { serviceConnection } from "../runtime/configure.js";

/**
 * Calls the Cairn service configured with `configure({ endpoint, apiKey })` (or CAIRN_ENDPOINT
 * and CAIRN_API_KEY) and returns the JSON answer. An error answer throws an `ApiRequestError`
 * carrying the service's code, message and status.
 */
export async function requestService<T>(
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const connection = serviceConnection();
  if (connection === undefined) {
    throw new ConfigurationError(
      "no Cairn service configured: call configure({ endpoint, apiKey }) or set CAIRN_ENDPOINT",
    );
  }
  const url = `${connection.endpoint.replace(/\/+$/, "")}${path}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (connection.apiKey !== undefined) headers["x-api-key"] = connection.apiKey;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (cause) {
    throw new ApiRequestError(
      "unreachable",
      `could not reach the Cairn service at ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
      0,
      { cause },
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = parsed as { error?: unknown; message?: unknown } | undefined;
    throw new ApiRequestError(
      typeof error?.error === "string" ? error.error : "http_error",
      typeof error?.message === "string"
        ? error.message
        : `the Cairn service answered ${response.status} to ${method} ${path}`,
      response.status,
    );
  }
  return parsed as T;
}
