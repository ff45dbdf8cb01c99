import { existsSync, readFileSync } from "node:fs";
import { apiKeyFile, resolveDataDir } from "../../server/create-server.js";

export interface ConnectionFlags {
  readonly endpoint?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly dataDir?: string | undefined;
}

/**
 * Where the commands find the service: `--endpoint`, else CAIRN_ENDPOINT, else the local
 * `cairn dev` address; the key from `--api-key`, else CAIRN_API_KEY, else the key `cairn dev`
 * saved in its data folder.
 */
export function serviceEndpoint(flags: ConnectionFlags): {
  endpoint: string;
  apiKey: string | undefined;
} {
  // An empty variable counts as unset, as everywhere else in Cairn.
  const endpoint = (
    flags.endpoint ||
    process.env.CAIRN_ENDPOINT ||
    "http://127.0.0.1:7070"
  ).replace(/\/+$/, "");
  const apiKey = flags.apiKey || process.env.CAIRN_API_KEY || savedKey(flags.dataDir);
  return { endpoint, apiKey };
}

/** {@link serviceEndpoint}, and whether the service answers its health check within a second. */
export async function serviceAddress(flags: ConnectionFlags) {
  const address = serviceEndpoint(flags);
  let reachable = false;
  try {
    const response = await fetch(`${address.endpoint}/health`, {
      signal: AbortSignal.timeout(1_000),
    });
    reachable = response.ok;
    await response.body?.cancel();
  } catch {
    reachable = false;
  }
  return { ...address, reachable };
}

function savedKey(dataDir: string | undefined): string | undefined {
  const file = apiKeyFile(resolveDataDir(dataDir));
  return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
}
