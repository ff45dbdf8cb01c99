import type { ZodType } from "zod";
import { ConfigurationError } from "../../core/errors/index.js";
import { requestJson, type ServiceRequest } from "../../core/http/request.js";
import { serviceConnection } from "../runtime/configure.js";

/**
 * Calls the Cairn service configured with `configure({ endpoint, apiKey })` (or CAIRN_ENDPOINT
 * and CAIRN_API_KEY) and returns its JSON answer, checked against `schema`. An error answer
 * throws the error its code means (`ApiRequestError` with the service's code, message and
 * status, or a more specific class).
 */
export async function requestService<T>(
  method: ServiceRequest["method"],
  path: string,
  body: unknown,
  schema: ZodType<T>,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<T> {
  const connection = serviceConnection();
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
