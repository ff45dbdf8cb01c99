// `cairn secrets rotate-key --database`: the master key of a service whose secret stores are in
// a PostgreSQL database that several instances share, rotated from the command line as it runs,
// in a child process, on a real cluster.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { newMasterKey } from "../src/sandbox/runner/secrets/master-key.js";
import { openPostgres } from "../src/server/store/postgres/connection.js";
import { postgresClusterPerFile } from "./helpers/postgres-cluster.js";
import { runCommand } from "./helpers/run-command.js";
import { startTestServer, type TestServer } from "./server/helpers.js";

const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));
const clusterFor = postgresClusterPerFile();
const apiKey = "rotate-postgres-key-0123456789";
const value = "sk-live-rotated-across-0a1b2c3d";
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function cairn(args: readonly string[], input: string, env: Record<string, string>) {
  return runCommand(
    process.execPath,
    ["--import", "tsx", cli, ...args],
    { CAIRN_MASTER_KEY: "", CAIRN_DATABASE_URL: "", ...env },
    input,
  );
}

/** An instance on the database, with a data directory of its own that outlives it. */
async function instance(database: string, masterKey: string, dataDir?: string) {
  const folder = dataDir ?? mkdtempSync(join(tmpdir(), "cairn-rotate-"));
  if (dataDir === undefined) cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const t = await startTestServer({ database, apiKey, masterKey, dataDir: folder });
  cleanups.push(() => t.server.close());
  return t;
}

async function problems(t: TestServer): Promise<Array<string | null>> {
  const store = (await (await t.call("GET", "/api/secret-stores/prod")).json()) as {
    secrets: Array<{ problem: string | null }>;
  };
  return store.secrets.map((secret) => secret.problem);
}

describe("cairn secrets rotate-key --database", { timeout: 60_000 }, () => {
  it("seals the database's values again, once, from each instance's data directory", async (context) => {
    const database = await clusterFor(context).createDatabase(undefined, { migrated: true });
    const old = newMasterKey("old").key.toString("base64");
    const a = await instance(database, old);
    const b = await instance(database, old);
    await a.call("POST", "/api/secret-stores", { name: "prod", allowlist: ["a.example.com"] });
    await a.call("PUT", "/api/secret-stores/prod/secrets/ONE", { value });
    await b.call("PUT", "/api/secret-stores/prod/secrets/TWO", { value: `${value}-two` });
    await a.server.close();
    await b.server.close();
    const sql = await openPostgres(database, { maxConnections: 1 });
    cleanups.push(() => sql.end());
    const rows = () => sql<Array<{ key: string; key_id: string; ciphertext: Uint8Array }>>`
      SELECT key, key_id, ciphertext FROM secrets ORDER BY key`;
    const before = await rows();

    // The key must be the one every instance shares: a key file is refused.
    const withoutKey = await cairn(
      ["secrets", "rotate-key", "--data-dir", a.dataDir, "--database", database],
      "",
      {},
    );
    expect(withoutKey.code).toBe(2);
    expect(withoutKey.stderr).toContain("the master key comes from CAIRN_MASTER_KEY");
    expect(await rows()).toEqual(before);

    const next = newMasterKey("next").key.toString("base64");
    const first = await cairn(["secrets", "rotate-key", "--data-dir", a.dataDir], `${next}\n`, {
      CAIRN_MASTER_KEY: old,
      CAIRN_DATABASE_URL: database,
    });
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(/^sealed 2 secrets again under master key [0-9a-f]{16}\.\n/);
    expect(first.stdout).not.toContain(next);
    const after = await rows();
    for (const [index, row] of after.entries()) {
      expect(row.key_id).not.toBe(before[index]?.key_id);
      expect(Buffer.from(row.ciphertext).equals(Buffer.from(before[index]?.ciphertext ?? []))).toBe(
        false,
      );
    }
    // On the other instance's data directory, with the same new key: the database's values are
    // under it already and stay as they are.
    const second = await cairn(
      ["secrets", "rotate-key", "--data-dir", b.dataDir, "--database", database],
      `${next}\n`,
      { CAIRN_MASTER_KEY: old },
    );
    expect(second).toMatchObject({ code: 0, stderr: "" });
    expect(await rows()).toEqual(after);
    // Started with the new key, both instances open every value; with the old one, none.
    expect(await problems(await instance(database, next, a.dataDir))).toEqual([null, null]);
    expect(await problems(await instance(database, next, b.dataDir))).toEqual([null, null]);
    const stale = await problems(await instance(database, old));
    expect(stale.every((problem) => problem?.includes("cannot be decrypted"))).toBe(true);
  });
});
