import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { minSecretValueLength } from "../../core/wire/secrets.js";
import {
  type SandboxEgressPolicy,
  scrubbable,
  secretEnvironment,
} from "../../sandbox/runner/egress/policy.js";
import {
  type MasterKey,
  masterKeyFile,
  parseMasterKey,
} from "../../sandbox/runner/secrets/master-key.js";
import {
  placeholderFor,
  type SealedValue,
  type SecretAddress,
  seal,
  UnsealError,
  unseal,
} from "../../sandbox/runner/secrets/seal.js";
import { transaction } from "./database.js";

/** A secret as the API shows it: never its value. */
export interface SecretInfo {
  readonly key: string;
  /** Where the proxy may use it; null when it follows the store's allowlist. */
  readonly hosts: readonly string[] | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * Why sandboxes cannot use the value: it cannot be opened (another master key, changed bytes),
   * or it is too short to scrub (set before such values were refused); null when they can.
   */
  readonly problem: string | null;
}

/** A secret store as the API shows it. */
export interface SecretStoreInfo {
  readonly name: string;
  readonly allowlist: readonly string[];
  readonly secrets: readonly SecretInfo[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * The vault as the service uses it, on either engine: {@link SecretVault} on the data
 * directory's SQLite (answering at once), or PostgresSecretVault (postgres/secret-vault.ts) on
 * the database that every instance shares. Only agent channels' signing secrets stay with the
 * instance (its SQLite) on both, beside the channels they belong to, and are answered at once.
 */
export interface SecretStores {
  /** Sentences for the values sealed under another master key (said at start). */
  otherKeyWarnings(): Promise<string[]>;
  /** Creates a store; false when the project has one of that name. */
  create(projectId: string, name: string, allowlist: readonly string[]): Promise<boolean>;
  has(projectId: string, name: string): Promise<boolean>;
  list(projectId: string): Promise<SecretStoreInfo[]>;
  get(projectId: string, name: string): Promise<SecretStoreInfo | undefined>;
  /** Replaces a store's allowlist; false when there is no such store. */
  setAllowlist(projectId: string, name: string, allowlist: readonly string[]): Promise<boolean>;
  /** Deletes a store and its secrets; false when there is no such store. */
  delete(projectId: string, name: string): Promise<boolean>;
  /** Seals and stores a value (see {@link SecretVault.setSecret}); false without the store. */
  setSecret(
    projectId: string,
    store: string,
    key: string,
    value: string,
    hosts: readonly string[] | null,
  ): Promise<"created" | "replaced" | false>;
  /** Deletes a secret; false when there is no such store or key. */
  deleteSecret(projectId: string, store: string, key: string): Promise<boolean>;
  /** A running sandbox's `CAIRN_SECRET_<KEY>` placeholders, without opening any value. */
  placeholders(sandboxId: string): Promise<Record<string, string>>;
  /** The egress policy of a running sandbox, read now; rejects with an `UnsealError`. */
  policyFor(sandboxId: string): Promise<SandboxEgressPolicy | undefined>;
  /** A secret's value for the service's own requests; rejects with an `UnsealError`. */
  openSecret(projectId: string, store: string, key: string): Promise<string | undefined>;
  /** Seals every value again under `next` (see {@link SecretVault.rotate}). */
  rotate(next: MasterKey): Promise<number>;
  setChannelSecret(projectId: string, channelId: string, value: string): void;
  channelSecret(projectId: string, channelId: string): string | undefined;
}

/** A row of `secret_stores`, as both engines read it. */
export interface StoreRow {
  name: string;
  allowlist: string;
  created_at: string;
  updated_at: string;
}

/** A row of `secrets`, as both engines read it. */
export interface SecretRow {
  id: string;
  store: string;
  key: string;
  hosts: string | null;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
  created_at: string;
  updated_at: string;
}

/**
 * The vault on SQLite: secret stores and their sealed values, per project. Values are sealed
 * with the master key (AES-256-GCM, seal.ts) before they are written and opened only for the
 * egress proxy (its {@link SecretVault.policyFor} is the proxy's `EgressPolicySource`); nothing
 * here returns a value to the API. The crypto lives with the runner (runner/secrets/, Node only,
 * no database); the rows live here, beside the other stores of the service's database. It
 * answers at once; {@link sqliteSecretStores} gives it as the service's {@link SecretStores}.
 */
export class SecretVault {
  constructor(
    private readonly db: DatabaseSync,
    private master: MasterKey,
  ) {}

  /**
   * A sentence for each other master key that values are sealed under (a service started with
   * the wrong key, or without its `CAIRN_MASTER_KEY`): said at start, so that it is not first
   * seen as a sandbox's refused requests. Reads key ids only, never a value.
   */
  otherKeyWarnings(): string[] {
    const rows = this.db
      .prepare(
        "SELECT key_id, count(*) AS secrets FROM secrets WHERE key_id != ? GROUP BY key_id ORDER BY key_id",
      )
      .all(this.master.id) as Array<{ key_id: string; secrets: number }>;
    return otherKeySentences(this.master, rows);
  }

  /** Creates a store; false when the project has one of that name. */
  create(projectId: string, name: string, allowlist: readonly string[]): boolean {
    const now = new Date().toISOString();
    const result = this.db
      .prepare(
        "INSERT OR IGNORE INTO secret_stores (project_id, name, allowlist, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      )
      .run(projectId, name, JSON.stringify(allowlist), now, now);
    return result.changes === 1;
  }

  has(projectId: string, name: string): boolean {
    return this.storeRow(projectId, name) !== undefined;
  }

  list(projectId: string): SecretStoreInfo[] {
    const stores = this.db
      .prepare("SELECT * FROM secret_stores WHERE project_id = ? ORDER BY name")
      .all(projectId) as unknown as StoreRow[];
    return stores.map((row) => this.info(projectId, row));
  }

  get(projectId: string, name: string): SecretStoreInfo | undefined {
    const row = this.storeRow(projectId, name);
    return row === undefined ? undefined : this.info(projectId, row);
  }

  /** Replaces a store's allowlist; false when there is no such store. */
  setAllowlist(projectId: string, name: string, allowlist: readonly string[]): boolean {
    const result = this.db
      .prepare(
        "UPDATE secret_stores SET allowlist = ?, updated_at = ? WHERE project_id = ? AND name = ?",
      )
      .run(JSON.stringify(allowlist), new Date().toISOString(), projectId, name);
    return result.changes === 1;
  }

  /** Deletes a store and its secrets; false when there is no such store. */
  delete(projectId: string, name: string): boolean {
    const result = this.db
      .prepare("DELETE FROM secret_stores WHERE project_id = ? AND name = ?")
      .run(projectId, name);
    return result.changes === 1;
  }

  /**
   * Seals and stores a value under `key`. Replacing a value keeps the secret's id, so running
   * sandboxes keep their placeholder and get the new value from their next request; a secret
   * deleted and set again is another secret, with new placeholders. `hosts` null follows the
   * store's allowlist. Returns false when there is no such store.
   */
  setSecret(
    projectId: string,
    store: string,
    key: string,
    value: string,
    hosts: readonly string[] | null,
  ): "created" | "replaced" | false {
    return transaction(this.db, () => {
      if (!this.has(projectId, store)) return false;
      const existing = this.db
        .prepare("SELECT created_at FROM secrets WHERE project_id = ? AND store = ? AND key = ?")
        .get(projectId, store, key) as { created_at: string } | undefined;
      const sealed = seal(this.master, { projectId, store, key }, value);
      const now = new Date().toISOString();
      this.db
        .prepare(
          `INSERT INTO secrets (id, project_id, store, key, hosts, key_id, nonce, ciphertext,
             created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (project_id, store, key) DO UPDATE SET
             hosts = excluded.hosts, key_id = excluded.key_id, nonce = excluded.nonce,
             ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`,
        )
        .run(
          newSecretId(),
          projectId,
          store,
          key,
          hosts === null ? null : JSON.stringify(hosts),
          sealed.keyId,
          sealed.nonce,
          sealed.ciphertext,
          existing?.created_at ?? now,
          now,
        );
      this.touch(projectId, store, now);
      return existing === undefined ? "created" : "replaced";
    });
  }

  /** Deletes a secret; false when there is no such store or key. */
  deleteSecret(projectId: string, store: string, key: string): boolean {
    const result = this.db
      .prepare("DELETE FROM secrets WHERE project_id = ? AND store = ? AND key = ?")
      .run(projectId, store, key);
    if (result.changes === 1) this.touch(projectId, store, new Date().toISOString());
    return result.changes === 1;
  }

  /**
   * The placeholders a sandbox's processes get (`CAIRN_SECRET_<KEY>`), without opening any
   * value: an exec never waits for, nor fails on, decryption.
   */
  placeholders(sandboxId: string): Record<string, string> {
    const sandbox = runningSandboxStore(this.db, sandboxId);
    if (sandbox === undefined) return {};
    return sandboxPlaceholders(
      this.master,
      sandboxId,
      this.secretRows(sandbox.projectId, sandbox.store),
    );
  }

  /**
   * The egress policy of a running sandbox with a secret store: the store's allowlist and its
   * secrets, opened, with this sandbox's placeholders; undefined without a store, or once the
   * sandbox is no longer running. Throws an `UnsealError` when a value cannot be opened.
   */
  policyFor(sandboxId: string): SandboxEgressPolicy | undefined {
    const sandbox = runningSandboxStore(this.db, sandboxId);
    if (sandbox === undefined) return undefined;
    const storeRow = this.storeRow(sandbox.projectId, sandbox.store);
    if (storeRow === undefined) return undefined;
    return egressPolicy(
      this.master,
      sandboxId,
      sandbox,
      storeRow,
      this.secretRows(sandbox.projectId, sandbox.store),
    );
  }

  /**
   * Seals every value of every project again under `next`, in one transaction, and uses it from
   * then on. Throws (changing nothing) when a value does not open under the current key.
   */
  rotate(next: MasterKey): number {
    const rows = this.db.prepare("SELECT * FROM secrets").all() as unknown as Array<
      SecretRow & { project_id: string }
    >;
    const channelRows = this.db
      .prepare(
        "SELECT s.*, c.project_id FROM agent_channel_secrets s JOIN agent_channels c ON c.id = s.channel_id",
      )
      .all() as unknown as ChannelSecretRow[];
    const count = transaction(this.db, () => {
      const update = this.db.prepare(
        "UPDATE secrets SET key_id = ?, nonce = ?, ciphertext = ? WHERE id = ?",
      );
      for (const row of rows) {
        const sealed = resealed(this.master, next, secretAddress(row.project_id, row), row);
        update.run(sealed.keyId, sealed.nonce, sealed.ciphertext, row.id);
      }
      const updateChannel = this.db.prepare(
        "UPDATE agent_channel_secrets SET key_id = ?, nonce = ?, ciphertext = ? WHERE channel_id = ?",
      );
      for (const row of channelRows) {
        const address = channelSecretAddress(row.project_id, row.channel_id);
        const sealed = resealed(this.master, next, address, row);
        updateChannel.run(sealed.keyId, sealed.nonce, sealed.ciphertext, row.channel_id);
      }
      return rows.length + channelRows.length;
    });
    this.master = next;
    return count;
  }

  /**
   * Seals and stores the signing secret of an agent channel (a webhook's, a Slack app's): kept
   * sealed rather than hashed, since the service signs with it. Sealed again by {@link rotate}.
   */
  setChannelSecret(projectId: string, channelId: string, value: string): void {
    const sealed = seal(this.master, channelSecretAddress(projectId, channelId), value);
    this.db
      .prepare(
        `INSERT INTO agent_channel_secrets (channel_id, key_id, nonce, ciphertext) VALUES (?, ?, ?, ?)
         ON CONFLICT (channel_id) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce,
           ciphertext = excluded.ciphertext`,
      )
      .run(channelId, sealed.keyId, sealed.nonce, sealed.ciphertext);
  }

  /**
   * An agent channel's signing secret, opened; undefined when it has none. Throws an
   * `UnsealError` when it cannot be opened (another master key, changed bytes).
   */
  channelSecret(projectId: string, channelId: string): string | undefined {
    const row = this.db
      .prepare("SELECT * FROM agent_channel_secrets WHERE channel_id = ?")
      .get(channelId) as unknown as Omit<ChannelSecretRow, "project_id"> | undefined;
    if (row === undefined) return undefined;
    return unseal(this.master, channelSecretAddress(projectId, channelId), sealedOf(row));
  }

  /**
   * A secret's value, opened for the service's own requests (a Slack channel's bot token, which
   * the host sends and no sandbox ever holds); undefined when the store has no such key. Throws
   * an `UnsealError` when it cannot be opened.
   */
  openSecret(projectId: string, store: string, key: string): string | undefined {
    const row = this.db
      .prepare("SELECT * FROM secrets WHERE project_id = ? AND store = ? AND key = ?")
      .get(projectId, store, key) as unknown as SecretRow | undefined;
    return row === undefined ? undefined : openedValue(this.master, projectId, row);
  }

  private info(projectId: string, row: StoreRow): SecretStoreInfo {
    return storeInfo(this.master, projectId, row, this.secretRows(projectId, row.name));
  }

  private storeRow(projectId: string, name: string): StoreRow | undefined {
    return this.db
      .prepare("SELECT * FROM secret_stores WHERE project_id = ? AND name = ?")
      .get(projectId, name) as StoreRow | undefined;
  }

  private secretRows(projectId: string, store: string): SecretRow[] {
    return this.db
      .prepare("SELECT * FROM secrets WHERE project_id = ? AND store = ? ORDER BY key")
      .all(projectId, store) as unknown as SecretRow[];
  }

  private touch(projectId: string, store: string, now: string): void {
    this.db
      .prepare("UPDATE secret_stores SET updated_at = ? WHERE project_id = ? AND name = ?")
      .run(now, projectId, store);
  }
}

/** The SQLite vault as the service's {@link SecretStores}: each answer is already there. */
export function sqliteSecretStores(vault: SecretVault): SecretStores {
  return {
    otherKeyWarnings: async () => vault.otherKeyWarnings(),
    create: async (projectId, name, allowlist) => vault.create(projectId, name, allowlist),
    has: async (projectId, name) => vault.has(projectId, name),
    list: async (projectId) => vault.list(projectId),
    get: async (projectId, name) => vault.get(projectId, name),
    setAllowlist: async (projectId, name, allowlist) =>
      vault.setAllowlist(projectId, name, allowlist),
    delete: async (projectId, name) => vault.delete(projectId, name),
    setSecret: async (projectId, store, key, value, hosts) =>
      vault.setSecret(projectId, store, key, value, hosts),
    deleteSecret: async (projectId, store, key) => vault.deleteSecret(projectId, store, key),
    placeholders: async (sandboxId) => vault.placeholders(sandboxId),
    policyFor: async (sandboxId) => vault.policyFor(sandboxId),
    openSecret: async (projectId, store, key) => vault.openSecret(projectId, store, key),
    rotate: async (next) => vault.rotate(next),
    setChannelSecret: (projectId, channelId, value) =>
      vault.setChannelSecret(projectId, channelId, value),
    channelSecret: (projectId, channelId) => vault.channelSecret(projectId, channelId),
  };
}

/** The project and store of a running sandbox, from the instance's own SQLite (its sandbox rows). */
export interface SandboxStore {
  readonly projectId: string;
  readonly store: string;
}

/**
 * The store of a running sandbox: a stopped one has no policy, so its placeholders are inert.
 * Sandboxes are the records of the instance that runs them, on either engine.
 */
export function runningSandboxStore(db: DatabaseSync, sandboxId: string): SandboxStore | undefined {
  const row = db
    .prepare("SELECT project_id, secret_store, status FROM sandboxes WHERE id = ?")
    .get(sandboxId) as
    | { project_id: string; secret_store: string | null; status: string }
    | undefined;
  if (row === undefined || row.secret_store === null || row.status !== "running") return undefined;
  return { projectId: row.project_id, store: row.secret_store };
}

/** What {@link SecretStores.otherKeyWarnings} says of values counted per other key id. */
export function otherKeySentences(
  master: MasterKey,
  rows: ReadonlyArray<{ key_id: string; secrets: number }>,
): string[] {
  return rows.map(({ key_id: keyId, secrets }) => {
    const they = secrets === 1 ? "1 secret is" : `${secrets} secrets are`;
    return `${they} sealed under master key ${keyId}, and this service has ${master.id} (${master.source}): sandboxes cannot use ${secrets === 1 ? "it" : "them"} until the service starts with that key, or ${secrets === 1 ? "it is" : "they are"} set again (cairn secrets ls names them)`;
  });
}

/** A new secret's id: a secret set again after a delete is another secret, with new placeholders. */
export function newSecretId(): string {
  return `sec_${randomBytes(12).toString("hex")}`;
}

/** A store as the API shows it, from its row and its secrets' rows (in key order). */
export function storeInfo(
  master: MasterKey,
  projectId: string,
  row: StoreRow,
  secrets: readonly SecretRow[],
): SecretStoreInfo {
  return {
    name: row.name,
    allowlist: JSON.parse(row.allowlist) as string[],
    secrets: secrets.map((secret) => ({
      key: secret.key,
      hosts: secret.hosts === null ? null : (JSON.parse(secret.hosts) as string[]),
      createdAt: secret.created_at,
      updatedAt: secret.updated_at,
      problem: problemOf(master, projectId, secret),
    })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A sandbox's `CAIRN_SECRET_<KEY>` variables for its store's secrets: placeholders only. */
export function sandboxPlaceholders(
  master: MasterKey,
  sandboxId: string,
  secrets: ReadonlyArray<Pick<SecretRow, "id" | "key">>,
): Record<string, string> {
  return secretEnvironment({
    secrets: secrets.map((row) => ({
      key: row.key,
      placeholder: placeholderFor(master, sandboxId, row.id),
    })),
  });
}

/** A running sandbox's egress policy: its store's allowlist and secrets, opened. */
export function egressPolicy(
  master: MasterKey,
  sandboxId: string,
  sandbox: SandboxStore,
  storeRow: Pick<StoreRow, "allowlist">,
  secrets: readonly SecretRow[],
): SandboxEgressPolicy {
  const allowlist = JSON.parse(storeRow.allowlist) as string[];
  return {
    store: sandbox.store,
    allowlist,
    secrets: secrets.map((row) => ({
      key: row.key,
      placeholder: placeholderFor(master, sandboxId, row.id),
      value: openedValue(master, sandbox.projectId, row),
      hosts: row.hosts === null ? allowlist : (JSON.parse(row.hosts) as string[]),
    })),
  };
}

/** A secret's value, opened; throws an `UnsealError` when it does not open. */
export function openedValue(master: MasterKey, projectId: string, row: SecretRow): string {
  return unseal(master, secretAddress(projectId, row), sealedOf(row));
}

// Opening the value is the only way to know it opens; the value is dropped at once.
function problemOf(master: MasterKey, projectId: string, row: SecretRow): string | null {
  let value: string;
  try {
    value = openedValue(master, projectId, row);
  } catch (error) {
    if (error instanceof UnsealError) return error.message;
    throw error;
  }
  // Set before such values were refused: the proxy will not send it (substitute.ts).
  if (!scrubbable(value)) {
    return `secret "${row.key}" of store "${row.store}" is shorter than ${minSecretValueLength} characters, too short for the egress proxy to keep out of answers, so it is not sent; set the secret again with its full value`;
  }
  return null;
}

/** Where a store's secret is sealed: its project, store and key. */
export function secretAddress(
  projectId: string,
  row: Pick<SecretRow, "store" | "key">,
): SecretAddress {
  return { projectId, store: row.store, key: row.key };
}

function sealedOf(row: Pick<SecretRow, "key_id" | "nonce" | "ciphertext">) {
  return { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext };
}

interface ChannelSecretRow {
  channel_id: string;
  project_id: string;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

/**
 * Where an agent channel's signing secret is sealed: its project and channel, under a store name
 * no secret store can have (they never start with #), so no ciphertext moves between the two.
 */
function channelSecretAddress(projectId: string, channelId: string): SecretAddress {
  return { projectId, store: "#agent-channels", key: channelId };
}

/**
 * A value opened under `current` and sealed under `next`; one that does not open stops a
 * rotation. A value sealed under `next` already (a rotation run again with the same new key, as
 * on each instance's data directory of a shared database) is kept as it is, once it opens.
 */
export function resealed(
  current: MasterKey,
  next: MasterKey,
  address: SecretAddress,
  row: Pick<SecretRow, "key_id" | "nonce" | "ciphertext">,
): SealedValue {
  const already = row.key_id === next.id && row.key_id !== current.id;
  let value: string;
  try {
    value = unseal(already ? next : current, address, sealedOf(row));
  } catch (error) {
    if (!(error instanceof UnsealError)) throw error;
    throw new UnsealError(
      address,
      error.reason,
      `the master key was not rotated and nothing changed: in project ${address.projectId}, ${error.message}`,
    );
  }
  return already ? sealedOf(row) : seal(next, address, value);
}

/**
 * Finishes a key rotation that stopped between its steps (`cairn secrets rotate-key` writes the
 * new key to `master.key.next`, seals every value again in one transaction, then renames the
 * file over `master.key`): when a stored value is sealed under the next key, the transaction
 * committed and the file is renamed; otherwise it never did and the file is removed.
 */
export function finishInterruptedRotation(db: DatabaseSync, dataDir: string): void {
  const next = `${masterKeyFile(dataDir)}.next`;
  if (!existsSync(next)) return;
  const key = parseMasterKey(readFileSync(next, "utf8").trim(), next);
  const committed = db
    .prepare(
      "SELECT 1 FROM secrets WHERE key_id = ? UNION ALL SELECT 1 FROM agent_channel_secrets WHERE key_id = ? LIMIT 1",
    )
    .get(key.id, key.id);
  if (committed !== undefined) renameSync(next, masterKeyFile(dataDir));
  else rmSync(next);
}
