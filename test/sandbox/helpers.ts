import { Sandbox } from "cairn-ai/sandbox";
import type { ServerOptions } from "cairn-ai/server";
import { afterAll, beforeAll, type TestContext } from "vitest";
import { checkPrerequisites } from "../../src/sandbox/runner/prerequisites.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

/** Small sizes, so that the limit tests fill a disk or a process table in a moment. */
export const testSandboxOptions: NonNullable<ServerOptions["sandboxes"]> = {
  diskRangeMB: { min: 16, max: 512, default: 32 },
  pidsLimit: 64,
  workspacePool: 2,
};

/**
 * A Cairn server with a sandbox runner, or undefined where this machine cannot run sandboxes:
 * each test then calls {@link needSandboxes}, which skips it with the reason.
 */
export async function startSandboxServer(
  options: ServerOptions = {},
): Promise<TestServer | undefined> {
  const t = await startTestServer({ sandboxes: testSandboxOptions, ...options });
  const probe = await t.call("GET", "/api/sandboxes");
  if (probe.status === 200) return t;
  const { message } = (await probe.json()) as { message: string };
  await t.stop();
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

/**
 * Why this machine cannot run the sandbox runner (it needs root and every required check of
 * `checkPrerequisites`), or undefined when it can: for the tests that start a service in a
 * process of their own.
 */
export function whySandboxesCannotRun(): Promise<string | undefined> {
  missingPrerequisites ??= (async () => {
    if (process.geteuid?.() !== 0) return "the sandbox runner needs root";
    const { checks } = await checkPrerequisites();
    const failing = checks.filter((check) => check.required && !check.ok);
    if (failing.length === 0) return undefined;
    const problems = failing.map((check) => `${check.name}: ${check.detail}`).join("; ");
    return `this machine cannot run sandboxes: ${problems}`;
  })();
  return missingPrerequisites;
}

let missingPrerequisites: Promise<string | undefined> | undefined;

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
