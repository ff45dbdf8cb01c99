/**
 * Reads an environment variable where there is one (Node, Deno, Bun) and returns undefined in a
 * browser, without importing any `node:` module.
 */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const value = env?.[name];
  return value === undefined || value === "" ? undefined : value;
}
