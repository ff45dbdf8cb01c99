import type { ZodType } from "zod";
import { type ServiceConnection, serviceConnection } from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";
import { callService, requestJson, type ServiceRequest } from "../../core/http/request.js";

/** Where the Cairn service is. Default: `CAIRN_ENDPOINT` and `CAIRN_API_KEY`. */
export interface SandboxConnection {
  readonly endpoint?: string;
  readonly apiKey?: string;
  /**
   * A sandbox token (`sandbox.createToken()`) instead of the API key, for a browser: it reaches
   * its one sandbox's status, and its files and execs as its scopes allow. With a token, no API
   * key is sent, not even `CAIRN_API_KEY`.
   */
  readonly token?: string;
}

export type ResolvedConnection = ServiceConnection;

export function resolveConnection(connection: SandboxConnection = {}): ServiceConnection {
  const { token, ...rest } = connection;
  const resolved = serviceConnection(rest);
  if (resolved === undefined) {
    throw new ConfigurationError(
      "no Cairn service to run sandboxes on: pass { endpoint, apiKey } (or { endpoint, token }) or set CAIRN_ENDPOINT and CAIRN_API_KEY",
    );
  }
  if (token === undefined) return resolved;
  if (connection.apiKey !== undefined) {
    throw new ConfigurationError("give an apiKey or a token, not both");
  }
  return { endpoint: resolved.endpoint, apiKey: undefined, token };
}

/** The connection fields that are set (the others fall back to the environment). */
export function definedConnection(fields: {
  endpoint: string | undefined;
  apiKey: string | undefined;
  token: string | undefined;
}): SandboxConnection {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as SandboxConnection;
}

type CallOptions = Omit<ServiceRequest, "method" | "path">;

/**
 * Calls the sandbox API and returns the response, for a caller that reads a stream. Error
 * answers throw the class their code means (SandboxNotFoundError, SandboxUnavailableError,
 * SandboxLimitError, SandboxCapacityError, else ApiRequestError).
 */
export function sandboxRequest(
  connection: ServiceConnection,
  method: ServiceRequest["method"],
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  return callService(connection, { ...options, method, path });
}

/** Calls the sandbox API and returns its JSON answer, checked against `schema`. */
export function sandboxJson<T>(
  connection: ServiceConnection,
  method: ServiceRequest["method"],
  path: string,
  schema: ZodType<T>,
  options: CallOptions = {},
): Promise<T> {
  return requestJson(connection, { ...options, method, path, schema });
}
