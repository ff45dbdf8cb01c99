import { type ParseArgsConfig, parseArgs } from "node:util";
import type { SandboxConnection } from "../../../sandbox/index.js";
import { serviceEndpoint } from "../service-address.js";

/** A command line that cannot be run as written: exit code 2, with the help. */
export class UsageError extends Error {}

const connectionOptions = {
  endpoint: { type: "string" },
  "api-key": { type: "string" },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** A subcommand's flags and positionals, with the connection flags every subcommand takes. */
export function parseCommand<const Options extends NonNullable<ParseArgsConfig["options"]>>(
  args: readonly string[],
  options: Options,
) {
  return parseArgs({
    args: [...args],
    options: { ...connectionOptions, ...options },
    allowPositionals: true,
    strict: true,
  });
}

/** Where the service is, from the flags, the environment or the key `cairn dev` saved. */
export function connectionFrom(values: {
  readonly endpoint?: string | undefined;
  readonly "api-key"?: string | undefined;
  readonly "data-dir"?: string | undefined;
}): SandboxConnection {
  const { endpoint, apiKey } = serviceEndpoint({
    endpoint: values.endpoint,
    apiKey: values["api-key"],
    dataDir: values["data-dir"],
  });
  return apiKey === undefined ? { endpoint } : { endpoint, apiKey };
}

/** A flag's value as a whole number, or undefined when the flag was not given. */
export function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !Number.isSafeInteger(number) || number < 0) {
    throw new UsageError(`${flag} must be a whole number (got "${value}")`);
  }
  return number;
}

/** `key=value` pairs as a record; `what` names them in the message when one has no `=`. */
export function keyValuePairs(pairs: readonly string[], what: string): Record<string, string> {
  const record: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf("=");
    if (equals < 1) throw new UsageError(`${what} must be key=value (got "${pair}")`);
    record[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return record;
}

/** The one positional a subcommand needs, or a usage error that shows how to give it. */
export function required(value: string | undefined, example: string): string {
  if (value === undefined || value === "") throw new UsageError(`usage: ${example}`);
  return value;
}

/** Positionals past the ones a subcommand takes are a mistake worth stopping on. */
export function noneLeft(extra: readonly string[], example: string): void {
  if (extra.length > 0) {
    throw new UsageError(
      `unexpected ${extra.map((each) => `"${each}"`).join(" ")}; usage: ${example}`,
    );
  }
}

/** The fields that are set: optional flags become optional properties of a request. */
export function definedOnly<T extends Record<string, unknown>>(
  object: T,
): { [Key in keyof T]?: Exclude<T[Key], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as {
    [Key in keyof T]?: Exclude<T[Key], undefined>;
  };
}
