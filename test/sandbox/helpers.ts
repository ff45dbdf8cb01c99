import { Sandbox } from "cairn-ai/sandbox";
import type { ServerOptions } from "cairn-ai/server";
import { afterAll, beforeAll, type TestContext } from "vitest";
import { startTestServer, type TestServer } from "../server/helpers.js";

/** Small sizes, so that the limit tests fill a disk or a process table in a moment. */
export const testSandboxOptions: NonNullable<ServerOptions["sandboxes"]> = {
  diskRangeMB: { min: 16, max: 512, default: 32 },
  pidsLimit: 64,
  workspacePool: 2,
};

/**
 * A Cairn server with a sandbox runner, or undefined (with the reason printed) where this
 * machine cannot run sandboxes. In CI a missing prerequisite fails the run instead.
 */
export async function startSandboxServer(
  options: ServerOptions = {},
): Promise<TestServer | undefined> {
  const t = await startTestServer({ sandboxes: testSandboxOptions, ...options });
  const probe = await t.call("GET", "/api/sandboxes");
  if (probe.status === 200) return t;
  const { message } = (await probe.json()) as { message: string };
  await t.stop();
  if (process.env.CI === "true") throw new Error(`sandboxes are required in CI: ${message}`);
  skipReason = `this machine cannot run sandboxes: ${message}`;
  return undefined;
}

let skipReason = "this machine cannot run sandboxes";

/** Skips the test, with the reason, when `t` is undefined: sandboxes cannot run here. */
export function needSandboxes(
  context: TestContext,
  t: TestServer | undefined,
): asserts t is TestServer {
  if (t === undefined) context.skip(skipReason);
}

/** The connection options of the SDK for a test server. */
export function connection(t: TestServer) {
  return { endpoint: t.server.url, apiKey: t.apiKey };
}

/** Host pids of processes whose command line contains `marker`. */
export async function hostProcesses(marker: string): Promise<number[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const command = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (command.replaceAll("\0", " ").includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * A server with a sandbox runner for the tests of one file, and one sandbox on it (undefined
 * where sandboxes cannot run here: each test calls {@link needSandboxes} first).
 */
export function sandboxSuite(options: ServerOptions = {}): {
  t: TestServer | undefined;
  sandbox: Sandbox;
} {
  const suite = {
    t: undefined as TestServer | undefined,
    sandbox: undefined as unknown as Sandbox,
  };
  beforeAll(async () => {
    suite.t = await startSandboxServer(options);
    if (suite.t !== undefined) suite.sandbox = await Sandbox.create(connection(suite.t));
  });
  afterAll(async () => {
    await suite.sandbox?.kill().catch(() => undefined);
    await suite.t?.stop();
  });
  return suite;
}
