import { serviceConnection } from "../../core/config.js";
import { callService } from "../../core/http/request.js";
import { savedApiKey } from "../../server/index.js";
import type { ConnectionOptions } from "../program/connection.js";

/** Where `cairn dev` listens unless told otherwise. */
const localEndpoint = "http://127.0.0.1:7070";

/**
 * Where the commands find the service: `--endpoint`, else CAIRN_ENDPOINT, else the local
 * `cairn dev` address; the key from `--api-key`, else CAIRN_API_KEY, else the key `cairn dev`
 * saved in its data directory.
 */
export function serviceEndpoint(options: ConnectionOptions): {
  endpoint: string;
  apiKey: string | undefined;
} {
  const given = { endpoint: options.endpoint, apiKey: options.apiKey };
  const connection =
    serviceConnection(given) ?? serviceConnection({ ...given, endpoint: localEndpoint });
  const endpoint = connection?.endpoint ?? localEndpoint;
  return { endpoint, apiKey: connection?.apiKey ?? savedApiKey(options.dataDir) };
}

/** {@link serviceEndpoint}, and whether the service answers its health check within a second. */
export async function serviceAddress(options: ConnectionOptions) {
  const address = serviceEndpoint(options);
  try {
    const response = await callService(address, {
      method: "GET",
      path: "/health",
      timeoutMs: 1_000,
    });
    await response.body?.cancel();
    return { ...address, reachable: true };
  } catch {
    return { ...address, reachable: false };
  }
}
