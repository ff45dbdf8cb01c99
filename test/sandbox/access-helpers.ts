import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll } from "vitest";
import type { TestServer } from "../server/helpers.js";
import { connection, startSandboxServer } from "./helpers.js";

/**
 * A server with a sandbox runner and two sandboxes on it, one to hold access to and one it must
 * not reach (each test calls needSandboxes(context, suite.t) first).
 */
export function twoSandboxSuite(): { t: TestServer | undefined; sandbox: Sandbox; other: Sandbox } {
  const suite = {
    t: undefined as TestServer | undefined,
    sandbox: undefined as unknown as Sandbox,
    other: undefined as unknown as Sandbox,
  };
  beforeAll(async () => {
    suite.t = await startSandboxServer();
    if (suite.t === undefined) return;
    [suite.sandbox, suite.other] = await Promise.all([
      Sandbox.create(connection(suite.t)),
      Sandbox.create(connection(suite.t)),
    ]);
  });
  afterAll(async () => {
    await Promise.all(
      [suite.sandbox, suite.other].map((each) => each?.kill().catch(() => undefined)),
    );
    await suite.t?.stop();
  });
  return suite;
}

/** Waits until `expiresAt` has passed (the service runs on this host, on the same clock). */
export async function pastExpiry(expiresAt: string): Promise<void> {
  const wait = Date.parse(expiresAt) - Date.now() + 50;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
