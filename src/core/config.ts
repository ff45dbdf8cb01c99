// Cairn's environment variables, each read here and nowhere else. An empty variable is unset,
// everywhere: `CAIRN_DATA_DIR=""` is no data directory, not the current one. Works where there is
// no `process` (a browser) without importing any `node:` module.
import { ConfigurationError } from "./errors/configuration-error.js";

/** The variables Cairn reads, by what they mean. */
export const environmentVariables = {
  endpoint: "CAIRN_ENDPOINT",
  apiKey: "CAIRN_API_KEY",
  dataDir: "CAIRN_DATA_DIR",
  port: "CAIRN_PORT",
  ingestWorkers: "CAIRN_INGEST_WORKERS",
  logLevel: "CAIRN_LOG_LEVEL",
  judgeBaseURL: "CAIRN_JUDGE_BASE_URL",
  judgeApiKey: "CAIRN_JUDGE_API_KEY",
  judgeModel: "CAIRN_JUDGE_MODEL",
  masterKey: "CAIRN_MASTER_KEY",
  databaseUrl: "CAIRN_DATABASE_URL",
  retentionDays: "CAIRN_RETENTION_DAYS",
  advertiseUrl: "CAIRN_ADVERTISE_URL",
  trustedProxies: "CAIRN_TRUSTED_PROXIES",
} as const;

export type EnvironmentVariable = (typeof environmentVariables)[keyof typeof environmentVariables];

export type EnvironmentSetting = keyof typeof environmentVariables;

/** The value of one of Cairn's variables; undefined when it is unset or empty. */
export function environment(setting: EnvironmentSetting): string | undefined {
  return readVariable(environmentVariables[setting]);
}

/** {@link environment} by the variable's name. */
export function readVariable(name: EnvironmentVariable): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const value = env?.[name];
  return value === undefined || value === "" ? undefined : value;
}

/**
 * A whole number from an option or, failing that, from a variable; `fallback` when neither is
 * set. A value out of range names where it came from.
 */
export function integerSetting(
  setting: EnvironmentSetting,
  given: number | undefined,
  range: { min: number; max: number; fallback: number; option: string },
): number {
  const raw = given ?? environment(setting);
  if (raw === undefined) return range.fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    const source = given === undefined ? environmentVariables[setting] : range.option;
    throw new ConfigurationError(
      `${source} must be a whole number from ${range.min} to ${range.max} (got ${JSON.stringify(raw)})`,
    );
  }
  return value;
}

/** Where a client finds the Cairn service, and the project key it sends. */
export interface ServiceConnection {
  /** The service's base URL, without a trailing slash. */
  readonly endpoint: string;
  readonly apiKey: string | undefined;
  /** A sandbox token, sent as `Authorization: Bearer` when there is no API key. */
  readonly token?: string | undefined;
}

/**
 * The connection `given` names, completed from CAIRN_ENDPOINT and CAIRN_API_KEY; undefined when
 * no endpoint is given or set. An endpoint that is not an http(s) URL is a ConfigurationError.
 */
export function serviceConnection(
  given: { readonly endpoint?: string | undefined; readonly apiKey?: string | undefined } = {},
): ServiceConnection | undefined {
  const endpoint = nonEmpty(given.endpoint) ?? environment("endpoint");
  if (endpoint === undefined) return undefined;
  const source =
    nonEmpty(given.endpoint) === undefined ? environmentVariables.endpoint : "the endpoint";
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigurationError(`${source} is not a URL: ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigurationError(
      `${source} must be an http:// or https:// URL (got ${JSON.stringify(endpoint)})`,
    );
  }
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    apiKey: nonEmpty(given.apiKey) ?? environment("apiKey"),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
