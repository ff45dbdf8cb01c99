import type { ZodType } from "zod";
import { type ServiceConnection, serviceConnection } from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";
import { callService, requestJson, type ServiceRequest } from "../../core/http/request.js";

/** Where the Cairn service is. Default: `CAIRN_ENDPOINT` and `CAIRN_API_KEY`. */
export interface SandboxConnection {
  readonly endpoint?: string;
  readonly apiKey?: string;
}

export type ResolvedConnection = ServiceConnection;

export function resolveConnection(connection: SandboxConnection = {}): ServiceConnection {
  const resolved = serviceConnection(connection);
  if (resolved === undefined) {
    throw new ConfigurationError(
      "no Cairn service to run sandboxes on: pass { endpoint, apiKey } or set CAIRN_ENDPOINT and CAIRN_API_KEY",
    );
  }
  return resolved;
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
