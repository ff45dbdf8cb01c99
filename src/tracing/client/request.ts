import type { ZodType } from "zod";
import { serviceConnection as connectionFrom, type ServiceConnection } from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";
import { requestJson, type ServiceRequest } from "../../core/http/request.js";
import { serviceConnection } from "../runtime/configure.js";

/** What a call of the API clients may set for itself. */
export interface ClientOptions {
  /** The service to call, instead of the configured one (`configure()`, else CAIRN_ENDPOINT). */
  readonly endpoint?: string | undefined;
  /** The project's key, instead of the configured one (`configure()`, else CAIRN_API_KEY). */
  readonly apiKey?: string | undefined;
  /** Cancels the call. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Calls the Cairn service configured with `configure({ endpoint, apiKey })` (or CAIRN_ENDPOINT
 * and CAIRN_API_KEY, or the call's own `endpoint` and `apiKey`) and returns its JSON answer,
 * checked against `schema`. An error answer throws the error its code means (`ApiRequestError`
 * with the service's code, message and status, or a more specific class).
 */
export async function requestService<T>(
  method: ServiceRequest["method"],
  path: string,
  body: unknown,
  schema: ZodType<T>,
  options: ClientOptions = {},
): Promise<T> {
  const connection = connectionFor(options);
  if (connection === undefined) {
    throw new ConfigurationError(
      "no Cairn service configured: call configure({ endpoint, apiKey }) or set CAIRN_ENDPOINT",
    );
  }
  return requestJson(connection, {
    method,
    path,
    json: body,
    schema,
    signal: options.signal,
  });
}

function connectionFor(options: ClientOptions): ServiceConnection | undefined {
  if (options.endpoint) return connectionFrom(options);
  const configured = serviceConnection();
  return configured === undefined || !options.apiKey
    ? configured
    : { ...configured, apiKey: options.apiKey };
}
