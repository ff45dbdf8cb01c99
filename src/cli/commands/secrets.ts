import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { environment } from "../../core/config.js";
import {
  secretKeySchema,
  secretStoreNameSchema,
  secretValueSchema,
} from "../../core/wire/secrets.js";
import { describeIssues } from "../../core/zod-message.js";
import { SecretStores } from "../../sandbox/client/secret-stores.js";
import {
  loadMasterKey,
  masterKeyFile,
  newMasterKey,
  parseMasterKey,
  writeKeyFile,
} from "../../sandbox/runner/secrets/master-key.js";
import { resolveDataDir } from "../../server/data-directory.js";
import { DataDirectoryLock } from "../../server/store/data-directory-lock.js";
import { openDatabase } from "../../server/store/database.js";
import { openPostgres } from "../../server/store/postgres/connection.js";
import { PostgresSecretVault } from "../../server/store/postgres/secret-vault.js";
import {
  finishInterruptedRotation,
  SecretVault,
  type SecretStores as ServiceSecretStores,
  sqliteSecretStores,
} from "../../server/store/secret-vault.js";
import { formatTable } from "../../tracing/evals/text-table.js";
import { UsageError } from "../program/cairn-command.js";
import type { ConnectionOptions } from "../program/connection.js";
import type {
  CreateStoreOptions,
  ListStoresOptions,
  RotateKeyOptions,
  SetSecretOptions,
} from "../program/secrets.js";
import { connectionFrom } from "./sandbox/options.js";
import { formatJson, formatTime } from "./sandbox/table.js";
import { promptHidden, readAll } from "./standard-input.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);

/** `cairn secrets create <store> --allow host…` */
export async function createStore(
  store: string,
  options: CreateStoreOptions,
  write = stdout,
): Promise<number> {
  const created = await new SecretStores(connectionFrom(options)).create(store, {
    allowlist: options.allow,
  });
  write(`created secret store ${created.name}: ${created.allowlist.join(", ")}\n`);
  return 0;
}

/** `cairn secrets set <store> <KEY>`: the value from piped stdin, or a prompt without echo. */
export async function setSecret(
  store: string,
  key: string,
  options: SetSecretOptions,
  write = stdout,
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): Promise<number> {
  // Wrong names are refused before anyone types a value.
  argument(secretStoreNameSchema, store, "<store>");
  argument(secretKeySchema, key, "<KEY>");
  const value =
    input.isTTY === true
      ? await promptHidden(`${key}: `, input, "cancelled: no secret was set")
      : await readAll(input);
  if (value === "") throw new UsageError("no value: pipe it in, or type it at the prompt");
  // Checked as the service checks it, so that a value it would refuse is not sent; the message
  // never quotes it.
  const checked = secretValueSchema.safeParse(value);
  if (!checked.success) {
    throw new UsageError(`no secret was set: ${describeIssues(checked.error)}`, {
      showHelp: false,
    });
  }
  await new SecretStores(connectionFrom(options)).setSecret(store, key, value, {
    ...(options.host === undefined ? {} : { hosts: options.host }),
  });
  write(`set ${key} in ${store}\n`);
  return 0;
}

/** `cairn secrets ls [store]`: stores, their hosts and keys. */
export async function listStores(
  store: string | undefined,
  options: ListStoresOptions,
  write = stdout,
): Promise<number> {
  const client = new SecretStores(connectionFrom(options));
  const stores = store === undefined ? await client.list() : [await client.get(store)];
  if (options.json) {
    write(formatJson(stores));
    return 0;
  }
  if (stores.length === 0) {
    write("no secret stores\n");
    return 0;
  }
  for (const each of stores) {
    write(`${each.name}  allows ${each.allowlist.join(", ")}\n`);
    if (each.secrets.length === 0) {
      write("  no secrets\n");
      continue;
    }
    const rows = each.secrets.map((secret) => [
      `  ${secret.key}`,
      secret.hosts === null ? "(the allowlist)" : secret.hosts.join(", "),
      formatTime(secret.updatedAt),
      secret.problem === null ? "" : `UNUSABLE: ${secret.problem}`,
    ]);
    write(formatTable(["  key", "hosts", "updated", ""], rows));
  }
  return 0;
}

/** `cairn secrets rm <store> [KEY]` */
export async function remove(
  store: string,
  key: string | undefined,
  options: ConnectionOptions,
  write = stdout,
): Promise<number> {
  const client = new SecretStores(connectionFrom(options));
  if (key === undefined) {
    await client.delete(store);
    write(`deleted secret store ${store}\n`);
  } else {
    await client.deleteSecret(store, key);
    write(`deleted ${key} from ${store}\n`);
  }
  return 0;
}

/**
 * `cairn secrets rotate-key`: on the data directory of a stopped service (its lock is taken, so
 * a running one refuses), seals every value again under a new master key in one transaction.
 * With a PostgreSQL database (`--database`, CAIRN_DATABASE_URL), the database's values too: its
 * instances share CAIRN_MASTER_KEY, so the key must come from there, and the command is run on
 * each instance's data directory (its agent channels' secrets) with the same new key piped in;
 * the values already under it are left as they are.
 */
export async function rotateKey(
  options: RotateKeyOptions,
  write = stdout,
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): Promise<number> {
  const dataDir = resolveDataDir(options.dataDir);
  // A mistyped directory must not become a new, empty one with a key of its own.
  if (!existsSync(join(dataDir, "cairn.db"))) {
    throw new UsageError(
      `${dataDir} is not the data directory of a Cairn service (it has no cairn.db); give it with --data-dir`,
      { showHelp: false },
    );
  }
  const database = options.database ?? environment("databaseUrl");
  const variable = environment("masterKey");
  if (database !== undefined && variable === undefined) {
    throw new UsageError(
      "with --database (or CAIRN_DATABASE_URL), the master key comes from CAIRN_MASTER_KEY, which every instance on the database shares: set it to the key the service runs with",
      { showHelp: false },
    );
  }
  const lock = await DataDirectoryLock.acquire(dataDir, 0);
  try {
    const db = openDatabase(join(dataDir, "cairn.db"));
    const sql = database === undefined ? undefined : await openPostgres(database);
    try {
      finishInterruptedRotation(db, dataDir);
      const master = loadMasterKey(dataDir, variable);
      const stores: ServiceSecretStores =
        sql === undefined
          ? sqliteSecretStores(new SecretVault(db, master))
          : new PostgresSecretVault(sql, db, master);
      if (variable !== undefined) {
        const piped = input.isTTY === true ? "" : (await readAll(input)).trim();
        const next =
          piped === ""
            ? newMasterKey("the new key")
            : parseMasterKey(piped, "the key on standard input");
        const count = await stores.rotate(next);
        write(
          `sealed ${count} secret${count === 1 ? "" : "s"} again under master key ${next.id}.\n`,
        );
        if (piped === "") {
          write(
            `Set this as CAIRN_MASTER_KEY before the next start; it is not saved anywhere:\n${next.key.toString("base64")}\n`,
          );
        } else {
          write("Set the key you gave as CAIRN_MASTER_KEY before the next start.\n");
        }
        return 0;
      }
      const file = masterKeyFile(dataDir);
      const next = newMasterKey(file);
      // The next key is on disk before any value is sealed with it; a start after an
      // interruption finishes the rotation or undoes it (finishInterruptedRotation).
      writeKeyFile(`${file}.next`, next.key);
      let count: number;
      try {
        count = await stores.rotate(next);
      } catch (error) {
        // Nothing was sealed again: the transaction rolled back, so the next key goes too.
        rmSync(`${file}.next`, { force: true });
        throw error;
      }
      renameSync(`${file}.next`, file);
      write(
        `sealed ${count} secret${count === 1 ? "" : "s"} again under master key ${next.id} (${file})\n`,
      );
      return 0;
    } finally {
      await sql?.end({ timeout: 5 });
      db.close();
    }
  } finally {
    lock.release();
  }
}

function argument(schema: z.ZodType, value: string, name: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new UsageError(`${name} ${JSON.stringify(value)}: ${describeIssues(parsed.error)}`);
  }
}
