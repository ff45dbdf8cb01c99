import type { DatabaseSync } from "node:sqlite";
import type { SandboxEgressPolicy } from "../../../sandbox/runner/egress/policy.js";
import type { MasterKey } from "../../../sandbox/runner/secrets/master-key.js";
import { seal } from "../../../sandbox/runner/secrets/seal.js";
import {
  egressPolicy,
  newSecretId,
  openedValue,
  otherKeySentences,
  resealed,
  runningSandboxStore,
  type SecretRow,
  type SecretStoreInfo,
  type SecretStores,
  SecretVault,
  type StoreRow,
  sandboxPlaceholders,
  secretAddress,
  storeInfo,
} from "../secret-vault.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction } from "./retried-transaction.js";

/** A store's row with its secrets' rows, read in one statement (one snapshot). */
interface StoreWithSecrets {
  readonly store: StoreRow;
  readonly secrets: SecretRow[];
}

/**
 * The vault on PostgreSQL: secret stores and their sealed values in the database every instance
 * shares (`secret_stores`, `secrets`; schema step 1), so that a store created through one
 * instance is there for a sandbox created through another, and a secret deleted or an allowlist
 * narrowed through one is gone for every sandbox at its next connection. Nothing is cached: the
 * egress proxy asks for a sandbox's policy at each connection, and this reads it from the
 * database then (one statement), so a change committed on any instance is seen by the next.
 *
 * Sealing, placeholders, problems and refusals are secret-vault.ts's own, so both engines give
 * the same answers. What stays with the instance (its SQLite, `local`): its sandboxes' rows (a
 * sandbox is the record of the instance that runs it) and its agent channels' signing secrets,
 * beside the channels they belong to. Every instance must run with the same master key: values
 * sealed under another are listed with their problem and never sent, as on SQLite.
 *
 * Between two checks of the API (a PATCH that reads the secrets' hosts, then narrows the
 * allowlist), another instance may set a secret whose hosts fall outside the new allowlist. That
 * sends nothing anywhere: the proxy admits a host on the store's allowlist first, so such a
 * secret is used only on hosts both allow.
 */
export class PostgresSecretVault implements SecretStores {
  private readonly local: SecretVault;

  constructor(
    private readonly sql: PostgresSql,
    private readonly db: DatabaseSync,
    private master: MasterKey,
  ) {
    this.local = new SecretVault(db, master);
  }

  async otherKeyWarnings(): Promise<string[]> {
    const rows = await this.sql<Array<{ key_id: string; secrets: number }>>`
      SELECT key_id, count(*)::int4 AS secrets FROM secrets WHERE key_id != ${this.master.id}
      GROUP BY key_id ORDER BY key_id`;
    return otherKeySentences(this.master, rows);
  }

  async create(projectId: string, name: string, allowlist: readonly string[]): Promise<boolean> {
    const now = new Date().toISOString();
    const created = await this.sql`
      INSERT INTO secret_stores (project_id, name, allowlist, created_at, updated_at)
      VALUES (${projectId}, ${name}, ${JSON.stringify(allowlist)}, ${now}, ${now})
      ON CONFLICT DO NOTHING RETURNING 1`;
    return created.length === 1;
  }

  async has(projectId: string, name: string): Promise<boolean> {
    const rows = await this.sql`
      SELECT 1 FROM secret_stores WHERE project_id = ${projectId} AND name = ${name}`;
    return rows.length === 1;
  }

  async list(projectId: string): Promise<SecretStoreInfo[]> {
    const [stores, secrets] = await Promise.all([
      this.sql<StoreRow[]>`
        SELECT name, allowlist, created_at, updated_at FROM secret_stores
        WHERE project_id = ${projectId} ORDER BY name`,
      this.sql<SecretRow[]>`
        SELECT * FROM secrets WHERE project_id = ${projectId} ORDER BY store, key`,
    ]);
    return stores.map((store) =>
      storeInfo(
        this.master,
        projectId,
        store,
        secrets.filter((secret) => secret.store === store.name),
      ),
    );
  }

  async get(projectId: string, name: string): Promise<SecretStoreInfo | undefined> {
    const found = await storeWithSecrets(this.sql, projectId, name);
    return found === undefined
      ? undefined
      : storeInfo(this.master, projectId, found.store, found.secrets);
  }

  async setAllowlist(
    projectId: string,
    name: string,
    allowlist: readonly string[],
  ): Promise<boolean> {
    const updated = await this.sql`
      UPDATE secret_stores SET allowlist = ${JSON.stringify(allowlist)},
        updated_at = ${new Date().toISOString()}
      WHERE project_id = ${projectId} AND name = ${name} RETURNING 1`;
    return updated.length === 1;
  }

  async delete(projectId: string, name: string): Promise<boolean> {
    // Its secrets go with it (ON DELETE CASCADE), in the same statement.
    const deleted = await this.sql`
      DELETE FROM secret_stores WHERE project_id = ${projectId} AND name = ${name} RETURNING 1`;
    return deleted.length === 1;
  }

  async setSecret(
    projectId: string,
    store: string,
    key: string,
    value: string,
    hosts: readonly string[] | null,
  ): Promise<"created" | "replaced" | false> {
    const sealed = seal(this.master, { projectId, store, key }, value);
    return inTransaction(this.sql, async (transaction) => {
      const now = new Date().toISOString();
      // The store's row is locked (and touched) first: a delete of the store through another
      // instance waits, or has happened and this finds no store.
      const touched = await transaction`
        UPDATE secret_stores SET updated_at = ${now}
        WHERE project_id = ${projectId} AND name = ${store} RETURNING 1`;
      if (touched.length === 0) return false;
      // xmax is 0 on a row this statement inserted, and not on one it updated: created or not,
      // told by the same statement that wrote it. The id and created_at of a replaced secret stay.
      const [row] = await transaction<Array<{ created: boolean }>>`
        INSERT INTO secrets (id, project_id, store, key, hosts, key_id, nonce, ciphertext,
          created_at, updated_at)
        VALUES (${newSecretId()}, ${projectId}, ${store}, ${key},
          ${hosts === null ? null : JSON.stringify(hosts)}, ${sealed.keyId},
          ${Buffer.from(sealed.nonce)}, ${Buffer.from(sealed.ciphertext)}, ${now}, ${now})
        ON CONFLICT (project_id, store, key) DO UPDATE SET
          hosts = excluded.hosts, key_id = excluded.key_id, nonce = excluded.nonce,
          ciphertext = excluded.ciphertext, updated_at = excluded.updated_at
        RETURNING (xmax = 0) AS created`;
      return row?.created === true ? "created" : "replaced";
    });
  }

  async deleteSecret(projectId: string, store: string, key: string): Promise<boolean> {
    return inTransaction(this.sql, async (transaction) => {
      const deleted = await transaction`
        DELETE FROM secrets WHERE project_id = ${projectId} AND store = ${store} AND key = ${key}
        RETURNING 1`;
      if (deleted.length === 0) return false;
      await transaction`
        UPDATE secret_stores SET updated_at = ${new Date().toISOString()}
        WHERE project_id = ${projectId} AND name = ${store}`;
      return true;
    });
  }

  async placeholders(sandboxId: string): Promise<Record<string, string>> {
    const sandbox = runningSandboxStore(this.db, sandboxId);
    if (sandbox === undefined) return {};
    const secrets = await this.sql<Array<Pick<SecretRow, "id" | "key">>>`
      SELECT id, key FROM secrets
      WHERE project_id = ${sandbox.projectId} AND store = ${sandbox.store} ORDER BY key`;
    return sandboxPlaceholders(this.master, sandboxId, secrets);
  }

  async policyFor(sandboxId: string): Promise<SandboxEgressPolicy | undefined> {
    const sandbox = runningSandboxStore(this.db, sandboxId);
    if (sandbox === undefined) return undefined;
    const found = await storeWithSecrets(this.sql, sandbox.projectId, sandbox.store);
    if (found === undefined) return undefined;
    return egressPolicy(this.master, sandboxId, sandbox, found.store, found.secrets);
  }

  async openSecret(projectId: string, store: string, key: string): Promise<string | undefined> {
    const [row] = await this.sql<SecretRow[]>`
      SELECT * FROM secrets WHERE project_id = ${projectId} AND store = ${store} AND key = ${key}`;
    return row === undefined ? undefined : openedValue(this.master, projectId, row);
  }

  /**
   * Seals every value of the database again under `next`, in one transaction that holds every
   * secret's row until it commits (a value set meanwhile through another instance waits, then
   * is sealed under the key that instance has: so stop every instance first, as on SQLite). If a
   * value does not open, nothing changes. This instance's agent channel secrets (SQLite) are
   * sealed again in their own transaction just before PostgreSQL's commits: should that commit
   * fail after it, they are under `next` and the database's values still under the current key,
   * which each value's problem then says.
   */
  async rotate(next: MasterKey): Promise<number> {
    let count = 0;
    await this.sql.begin(async (transaction) => {
      const rows = await transaction<Array<SecretRow & { project_id: string }>>`
        SELECT * FROM secrets ORDER BY project_id, store, key FOR UPDATE`;
      for (const row of rows) {
        const sealed = resealed(this.master, next, secretAddress(row.project_id, row), row);
        await transaction`
          UPDATE secrets SET key_id = ${sealed.keyId}, nonce = ${Buffer.from(sealed.nonce)},
            ciphertext = ${Buffer.from(sealed.ciphertext)}
          WHERE id = ${row.id}`;
      }
      count = rows.length + this.local.rotate(next);
    });
    this.master = next;
    return count;
  }

  setChannelSecret(projectId: string, channelId: string, value: string): void {
    this.local.setChannelSecret(projectId, channelId, value);
  }

  channelSecret(projectId: string, channelId: string): string | undefined {
    return this.local.channelSecret(projectId, channelId);
  }
}

/** A store and its secrets in key order, in one statement; undefined without the store. */
async function storeWithSecrets(
  sql: PostgresSql,
  projectId: string,
  name: string,
): Promise<StoreWithSecrets | undefined> {
  const rows = await sql<Array<StoreRow & NullableSecret>>`
    SELECT s.name, s.allowlist, s.created_at, s.updated_at, c.id AS secret_id, c.key, c.hosts,
      c.key_id, c.nonce, c.ciphertext, c.created_at AS secret_created_at,
      c.updated_at AS secret_updated_at
    FROM secret_stores s
    LEFT JOIN secrets c ON c.project_id = s.project_id AND c.store = s.name
    WHERE s.project_id = ${projectId} AND s.name = ${name}
    ORDER BY c.key`;
  const [first] = rows;
  if (first === undefined) return undefined;
  const { name: store, allowlist, created_at, updated_at } = first;
  const secrets = rows.flatMap((row): SecretRow[] =>
    row.secret_id === null
      ? []
      : [
          {
            id: row.secret_id,
            store,
            key: row.key,
            hosts: row.hosts,
            key_id: row.key_id,
            nonce: row.nonce,
            ciphertext: row.ciphertext,
            created_at: row.secret_created_at,
            updated_at: row.secret_updated_at,
          },
        ],
  );
  return { store: { name: store, allowlist, created_at, updated_at }, secrets };
}

/** A secret's columns beside its store's, null where the store has none (LEFT JOIN). */
type NullableSecret =
  | {
      secret_id: string;
      key: string;
      hosts: string | null;
      key_id: string;
      nonce: Uint8Array;
      ciphertext: Uint8Array;
      secret_created_at: string;
      secret_updated_at: string;
    }
  | { secret_id: null };
