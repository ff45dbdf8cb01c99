// From the parsed options of a sandbox subcommand to the arguments of an SDK call.
import type { SandboxConnection } from "../../../sandbox/index.js";
import type { ConnectionOptions } from "../../program/connection.js";
import { serviceEndpoint } from "../service-address.js";

/** Where the service is, from the options, the environment or the key `cairn dev` saved. */
export function connectionFrom(options: ConnectionOptions): SandboxConnection {
  const { endpoint, apiKey } = serviceEndpoint(options);
  return apiKey === undefined ? { endpoint } : { endpoint, apiKey };
}

/** The fields that are set: options not given become properties left out of a request. */
export function definedOnly<T extends Record<string, unknown>>(
  object: T,
): { [Key in keyof T]?: Exclude<T[Key], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as {
    [Key in keyof T]?: Exclude<T[Key], undefined>;
  };
}
