// The vault on both engines, through the one interface the service uses (SecretStores): the same
// answers on SQLite and on PostgreSQL, and on PostgreSQL what several instances share: a store
// made through one vault is there for a sandbox of another, and a change made through one is
// what the other reads at once (nothing cached). Sandboxes' rows stay in each instance's SQLite.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { newSandboxId } from "../../src/core/ids.js";
import type { SandboxStatus } from "../../src/core/wire/sandbox.js";
import { newMasterKey, parseMasterKey } from "../../src/sandbox/runner/secrets/master-key.js";
import { openDatabase } from "../../src/server/store/database.js";
import { openPostgres, type PostgresSql } from "../../src/server/store/postgres/connection.js";
import { PostgresSecretVault } from "../../src/server/store/postgres/secret-vault.js";
import { SandboxStore } from "../../src/server/store/sandboxes.js";
import {
  type SecretStores,
  SecretVault,
  sqliteSecretStores,
} from "../../src/server/store/secret-vault.js";
import { postgresClusterPerFile } from "../helpers/postgres-cluster.js";

const master = parseMasterKey(Buffer.alloc(32, 7).toString("base64"), "CAIRN_MASTER_KEY");
const value = "sk-live-4f3e2d1c0b0a99887766";

interface Instance {
  readonly vault: SecretStores;
  /** The instance's own SQLite: its sandboxes' rows. */
  readonly db: DatabaseSync;
  /** A vault of the same data with another master key (an instance started with the wrong one). */
  withKey(key: typeof master): SecretStores;
}

interface Engine {
  readonly name: "sqlite" | "postgres";
  /** A fresh store with projects prj_a and prj_b; each further call is another instance of it. */
  open(context: TestContext): Promise<Instance>;
  another(): Promise<Instance>;
  /** The stored rows of `secrets`, as the engine returns them. */
  secretRows(): Promise<Array<Record<string, unknown>>>;
}

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function localDatabase(): DatabaseSync {
  const dir = mkdtempSync(join(tmpdir(), "cairn-vault-"));
  const db = openDatabase(join(dir, "cairn.db"));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  closers.push(() => db.close());
  for (const id of ["prj_a", "prj_b"]) {
    db.prepare("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)").run(id, id, "");
  }
  return db;
}

function sqliteEngine(): Engine {
  let db: DatabaseSync | undefined;
  const instance = (local: DatabaseSync): Instance => ({
    vault: sqliteSecretStores(new SecretVault(local, master)),
    db: local,
    withKey: (key) => sqliteSecretStores(new SecretVault(local, key)),
  });
  return {
    name: "sqlite",
    async open() {
      db = localDatabase();
      return instance(db);
    },
    async another() {
      return instance(db as DatabaseSync);
    },
    async secretRows() {
      return (db as DatabaseSync)
        .prepare("SELECT * FROM secrets ORDER BY project_id, store, key")
        .all() as Array<Record<string, unknown>>;
    },
  };
}

function postgresEngine(): Engine {
  const clusterFor = postgresClusterPerFile();
  let url: string | undefined;
  let first: PostgresSql | undefined;
  const instance = async (): Promise<Instance> => {
    const sql = await openPostgres(url as string);
    closers.push(() => sql.end({ timeout: 5 }));
    const db = localDatabase();
    return {
      vault: new PostgresSecretVault(sql, db, master),
      db,
      withKey: (key) => new PostgresSecretVault(sql, db, key),
    };
  };
  return {
    name: "postgres",
    async open(context) {
      url = await clusterFor(context).createDatabase(undefined, { migrated: true });
      const opened = await instance();
      first = await openPostgres(url);
      closers.push(() => first?.end({ timeout: 5 }));
      for (const id of ["prj_a", "prj_b"]) {
        await first`INSERT INTO projects (id, name, created_at) VALUES (${id}, ${id}, '')`;
      }
      return opened;
    },
    another: instance,
    async secretRows() {
      return [
        ...(await (first as PostgresSql)`SELECT * FROM secrets ORDER BY project_id, store, key`),
      ];
    },
  };
}

/** A running sandbox of `projectId` naming `store`, in an instance's own SQLite. */
function sandbox(db: DatabaseSync, projectId: string, store: string | null): string {
  const id = newSandboxId();
  const at = new Date().toISOString();
  const times = { tagsLastUpdatedAt: at, createdAt: at, expiresAt: at, endedAt: null };
  const size = { cpuCount: 1, memoryMB: 1024, diskMB: 20_480 };
  new SandboxStore(db).insert(projectId, {
    ...{ id, template: "base", status: "running", secretStore: store, tags: {} },
    ...{ ...size, ...times, unenforcedLimits: [], failure: null },
  });
  return id;
}

const setStatus = (db: DatabaseSync, id: string, status: SandboxStatus) =>
  db.prepare("UPDATE sandboxes SET status = ? WHERE id = ?").run(status, id);

/** An answer with its times replaced, to compare engines whose clocks ran at other moments. */
function timeless(answer: unknown): unknown {
  if (answer === undefined) return answer;
  return JSON.parse(
    JSON.stringify(answer, (key, field) =>
      key === "createdAt" || key === "updatedAt" ? typeof field : field,
    ),
  );
}

/** What each engine answered to the same calls, in order, to compare them. */
const answers: Record<string, unknown[]> = {};

for (const engine of [sqliteEngine(), postgresEngine()]) {
  describe(`the vault (${engine.name})`, () => {
    it("answers the calls of the API as the other engine does", async (context) => {
      const { vault } = await engine.open(context);
      const seen: unknown[] = [];
      const record = async (answer: unknown) => seen.push(timeless(await answer));
      await record(vault.create("prj_a", "prod", ["api.example.com", "*.example.org"]));
      await record(vault.create("prj_a", "prod", ["other.example.com"]));
      await record(vault.create("prj_a", "dev", []));
      await record(vault.create("prj_b", "prod", ["b.example.com"]));
      await record(vault.setSecret("prj_a", "prod", "ORG_KEY", "org-value-1", ["*.example.org"]));
      await record(vault.setSecret("prj_a", "prod", "API_KEY", value, null));
      await record(vault.setSecret("prj_a", "prod", "PIN", "1234", null));
      await record(vault.setSecret("prj_a", "nowhere", "API_KEY", value, null));
      await record(vault.list("prj_a"));
      await record(vault.list("prj_b"));
      const before = await vault.get("prj_a", "prod");
      await record(vault.setSecret("prj_a", "prod", "API_KEY", `${value}-2`, null));
      const after = await vault.get("prj_a", "prod");
      // Replaced, a secret keeps when it was created.
      expect(after?.secrets.find((each) => each.key === "API_KEY")?.createdAt).toBe(
        before?.secrets.find((each) => each.key === "API_KEY")?.createdAt,
      );
      await record(vault.has("prj_a", "prod"));
      await record(vault.has("prj_b", "dev"));
      await record(vault.get("prj_b", "dev"));
      await record(vault.setAllowlist("prj_a", "prod", ["api.example.com"]));
      await record(vault.setAllowlist("prj_a", "nowhere", ["api.example.com"]));
      await record(vault.deleteSecret("prj_a", "prod", "PIN"));
      await record(vault.deleteSecret("prj_a", "prod", "PIN"));
      await record(vault.deleteSecret("prj_b", "prod", "API_KEY"));
      await record(vault.openSecret("prj_a", "prod", "API_KEY"));
      await record(vault.openSecret("prj_b", "prod", "API_KEY"));
      await record(vault.get("prj_a", "prod"));
      await record(vault.delete("prj_a", "prod"));
      await record(vault.delete("prj_a", "prod"));
      await record(vault.list("prj_a"));
      answers[engine.name] = seen;
      const other = engine.name === "sqlite" ? answers.postgres : answers.sqlite;
      if (other !== undefined) expect(seen).toEqual(other);
      expect(seen[0]).toBe(true);
      expect(seen[1]).toBe(false);
      expect(seen[7]).toBe(false);
    });

    it("stores sealed values only, never the plaintext", async (context) => {
      const { vault } = await engine.open(context);
      await vault.create("prj_a", "prod", ["api.example.com"]);
      await vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      const stored = JSON.stringify(await engine.secretRows(), (_key, field) =>
        field instanceof Uint8Array ? Buffer.from(field).toString("latin1") : field,
      );
      expect(stored).toContain("API_KEY");
      for (const form of [
        value,
        Buffer.from(value).toString("hex"),
        Buffer.from(value).toString("base64"),
      ]) {
        expect(stored).not.toContain(form);
      }
    });

    it("gives a sandbox of another instance the store and its changes at once", async (context) => {
      const a = await engine.open(context);
      const b = await engine.another();
      await a.vault.create("prj_a", "prod", ["api.example.com", "*.example.org"]);
      await a.vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      await a.vault.setSecret("prj_a", "prod", "ORG_KEY", "org-value-1", ["*.example.org"]);
      const id = sandbox(b.db, "prj_a", "prod");
      const placeholders = await b.vault.placeholders(id);
      expect(Object.keys(placeholders)).toEqual(["CAIRN_SECRET_API_KEY", "CAIRN_SECRET_ORG_KEY"]);
      expect(JSON.stringify(placeholders)).not.toContain(value);
      const policy = await b.vault.policyFor(id);
      expect(policy?.allowlist).toEqual(["api.example.com", "*.example.org"]);
      expect(policy?.secrets.map((each) => [each.key, each.value, each.hosts])).toEqual([
        ["API_KEY", value, ["api.example.com", "*.example.org"]],
        ["ORG_KEY", "org-value-1", ["*.example.org"]],
      ]);
      expect(policy?.secrets.map((each) => each.placeholder)).toEqual(Object.values(placeholders));
      // A change through A is what B reads next: a new value under the same placeholder…
      await a.vault.setSecret("prj_a", "prod", "API_KEY", `${value}-rotated`, null);
      const replaced = (await b.vault.policyFor(id))?.secrets[0];
      expect(replaced?.value).toBe(`${value}-rotated`);
      expect(replaced?.placeholder).toBe(placeholders.CAIRN_SECRET_API_KEY);
      // …a narrower allowlist, a deleted secret, a deleted store.
      await a.vault.setAllowlist("prj_a", "prod", ["*.example.org"]);
      expect((await b.vault.policyFor(id))?.allowlist).toEqual(["*.example.org"]);
      await a.vault.deleteSecret("prj_a", "prod", "API_KEY");
      expect((await b.vault.policyFor(id))?.secrets.map((each) => each.key)).toEqual(["ORG_KEY"]);
      expect(Object.keys(await b.vault.placeholders(id))).toEqual(["CAIRN_SECRET_ORG_KEY"]);
      // Set again, it is another secret: the old placeholder means nothing.
      await a.vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      const renewed = await b.vault.placeholders(id);
      expect(renewed.CAIRN_SECRET_API_KEY).not.toBe(placeholders.CAIRN_SECRET_API_KEY);
      await a.vault.delete("prj_a", "prod");
      expect(await b.vault.policyFor(id)).toBeUndefined();
      expect(await b.vault.placeholders(id)).toEqual({});
    });

    it("reaches a store of the sandbox's own project only, and only while it runs", async (context) => {
      const a = await engine.open(context);
      const b = await engine.another();
      await a.vault.create("prj_a", "prod", ["a.example.com"]);
      await a.vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      // Project b's sandbox names a store of the same name, which project b does not have.
      const foreign = sandbox(b.db, "prj_b", "prod");
      expect(await b.vault.policyFor(foreign)).toBeUndefined();
      expect(await b.vault.placeholders(foreign)).toEqual({});
      await a.vault.create("prj_b", "prod", ["b.example.com"]);
      await a.vault.setSecret("prj_b", "prod", "API_KEY", "sk-project-b-value", null);
      const policy = await b.vault.policyFor(foreign);
      expect(policy?.allowlist).toEqual(["b.example.com"]);
      expect(policy?.secrets.map((each) => each.value)).toEqual(["sk-project-b-value"]);
      // A sandbox is the record of the instance that runs it: A knows nothing of B's.
      if (engine.name === "postgres") expect(await a.vault.policyFor(foreign)).toBeUndefined();
      for (const status of ["stopping", "stopped", "failed"] as const) {
        setStatus(b.db, foreign, status);
        expect(await b.vault.policyFor(foreign), status).toBeUndefined();
        expect(await b.vault.placeholders(foreign), status).toEqual({});
      }
    });

    it("warns of, and never opens, values sealed under another master key", async (context) => {
      const a = await engine.open(context);
      await a.vault.create("prj_a", "prod", ["api.example.com"]);
      await a.vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      await a.vault.setSecret("prj_a", "prod", "ORG_KEY", "org-value-1", null);
      expect(await a.vault.otherKeyWarnings()).toEqual([]);
      const wrong = a.withKey(newMasterKey("CAIRN_MASTER_KEY"));
      const [warning, ...more] = await wrong.otherKeyWarnings();
      expect(more).toEqual([]);
      expect(warning).toMatch(
        new RegExp(`^2 secrets are sealed under master key ${master.id}, and this service has`),
      );
      const id = sandbox(a.db, "prj_a", "prod");
      await expect(wrong.policyFor(id)).rejects.toThrow(
        /secret "API_KEY" of store "prod" cannot be decrypted: it was sealed with master key/,
      );
      await expect(wrong.openSecret("prj_a", "prod", "API_KEY")).rejects.toThrow(
        /cannot be decrypted/,
      );
      // Placeholders need no value; the listing names the problem, never the value.
      expect(Object.keys(await wrong.placeholders(id))).toHaveLength(2);
      const listed = JSON.stringify(await wrong.list("prj_a"));
      expect(listed).toContain("cannot be decrypted");
      expect(listed).not.toContain(value);
    });

    it("rotates the master key in one transaction: every value, or none", async (context) => {
      const a = await engine.open(context);
      await a.vault.create("prj_a", "prod", ["api.example.com"]);
      await a.vault.create("prj_b", "prod", ["api.example.com"]);
      await a.vault.setSecret("prj_a", "prod", "API_KEY", value, null);
      await a.vault.setSecret("prj_b", "prod", "API_KEY", "sk-project-b-value", null);
      // A value sealed under another key stops the rotation, naming it: nothing changes.
      const stranger = a.withKey(newMasterKey("stranger"));
      await stranger.setSecret("prj_b", "prod", "STRANGER", "sealed-by-a-stranger", null);
      const rows = await engine.secretRows();
      await expect(a.vault.rotate(newMasterKey("next"))).rejects.toThrow(
        /the master key was not rotated and nothing changed: in project prj_b, secret "STRANGER"/,
      );
      expect(await engine.secretRows()).toEqual(rows);
      await a.vault.deleteSecret("prj_b", "prod", "STRANGER");
      const next = newMasterKey("next");
      expect(await a.vault.rotate(next)).toBe(2);
      const keyIds = (await engine.secretRows()).map((row) => row.key_id);
      expect(keyIds).toEqual([next.id, next.id]);
      // Run again from the old key with the same new one (another instance's data directory),
      // it keeps what is under the new key already.
      const rotated = await engine.secretRows();
      expect(await a.withKey(master).rotate(next)).toBe(2);
      expect(await engine.secretRows()).toEqual(rotated);
      // The vault goes on with the new key; the old one opens nothing any more.
      expect(await a.vault.openSecret("prj_a", "prod", "API_KEY")).toBe(value);
      expect(await a.withKey(next).openSecret("prj_b", "prod", "API_KEY")).toBe(
        "sk-project-b-value",
      );
      await expect(a.withKey(master).openSecret("prj_a", "prod", "API_KEY")).rejects.toThrow(
        /cannot be decrypted/,
      );
    });
  });
}
