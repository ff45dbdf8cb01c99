// Several service instances with sandboxes on one throwaway PostgreSQL cluster, for the test
// files of sandboxes across instances (issue 16).

import { Sandbox } from "cairn-ai/sandbox";
import type { ServerOptions } from "cairn-ai/server";
import { afterEach, type TestContext } from "vitest";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";
import { startTestServer, type TestServer } from "../server/helpers.js";
import { testSandboxOptions, whySandboxesCannotRun } from "./helpers.js";

/** The first project's key, the same for every instance of a database. */
export const apiKey = "instances-key-0123456789";
/** Quick heartbeats, so that a vanished instance is found in about a second. */
export const presence = { heartbeatMs: 100, staleAfterMs: 1500 };
/** One master key for the instances of a database, as CAIRN_MASTER_KEY gives in production. */
export const masterKey = "b".repeat(64);

/**
 * The cluster of the test file that calls it (at its top level), cleanups run after each test,
 * and ways to start instances and sandboxes on it.
 */
export function instancesSuite() {
  const clusterFor = postgresClusterPerFile();
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A new database on the file's cluster, and a way to start instances on it (each with
   * `common` and its own options); the test is skipped where PostgreSQL or sandboxes are missing.
   */
  const oneDatabase = async (context: TestContext, common: ServerOptions = {}) => {
    const missing = await whySandboxesCannotRun();
    if (missing !== undefined) context.skip(missing);
    const database = await clusterFor(context).createDatabase();
    const start = async (own: ServerOptions = {}): Promise<TestServer> => {
      const options = { sandboxes: testSandboxOptions, presence, masterKey, ...common, ...own };
      const t = await startTestServer({ ...options, database, apiKey });
      cleanups.push(() => t.stop());
      return t;
    };
    return { database, start };
  };

  /** A sandbox made through `t`, killed after the test. */
  const sandboxOn = async (t: TestServer, options: { tags?: Record<string, string> } = {}) => {
    const created = await Sandbox.create({ endpoint: t.server.url, apiKey, ...options });
    cleanups.push(async () => void (await created.kill().catch(() => undefined)));
    return created;
  };

  return { cleanups, oneDatabase, sandboxOn };
}
