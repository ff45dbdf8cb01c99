// Where the service keeps its data, and the key it saves for local tools: apart from
// createServer(), so that a tool that reads the key (the CLI) does not load the service.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { environment } from "../core/config.js";

/** The data directory: the one given, else `CAIRN_DATA_DIR`, else `./.cairn`. */
export function resolveDataDir(dataDir?: string): string {
  return resolve(dataDir || environment("dataDir") || ".cairn");
}

/** Where the first start saves the API key, for local tools (`cairn traces …`). */
export function apiKeyFile(dataDir: string): string {
  return join(dataDir, "api-key");
}

/**
 * The API key the service saved at its first start in `dataDir` (default as for
 * `createServer()`); undefined when there is none.
 */
export function savedApiKey(dataDir?: string): string | undefined {
  const file = apiKeyFile(resolveDataDir(dataDir));
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
}
