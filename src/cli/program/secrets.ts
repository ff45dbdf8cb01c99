import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";

export interface CreateStoreOptions extends ConnectionOptions {
  readonly allow: readonly string[];
}

export interface SetSecretOptions extends ConnectionOptions {
  readonly host?: readonly string[];
}

export interface ListStoresOptions extends ConnectionOptions {
  readonly json?: boolean;
}

export interface RotateKeyOptions {
  readonly dataDir?: string;
  readonly database?: string;
}

const collect = (value: string, previous: readonly string[] = []) => [...previous, value];
const secrets = () => import("../commands/secrets.js");

/** Declares `cairn secrets` and its subcommands. */
export function addSecretsCommand(program: CairnCommand): void {
  const command = program
    .command("secrets")
    .summary("manage secret stores: the hosts sandboxes may reach, and write-only secrets")
    .description(
      "Secret stores of a running Cairn service. A sandbox created with --secret-store <name> reaches only the store's hosts, through its egress proxy, which puts each secret into requests to its hosts; the sandbox itself only ever holds a placeholder. Values are never printed, and never taken from the command line.",
    );
  withConnectionOptions(
    command
      .command("create")
      .description("Creates a secret store with the hosts its sandboxes may reach.")
      .argument("<store>", "the store's name: lowercase letters, digits and -")
      .requiredOption(
        "--allow <host>",
        "a host its sandboxes may reach: api.example.com, *.example.com, optionally :port; repeat for more",
        collect,
      ),
  ).runs(async (store: string, options: CreateStoreOptions) =>
    (await secrets()).createStore(store, options),
  );
  withConnectionOptions(
    command
      .command("set")
      .description(
        "Sets a secret. The value (8 characters to 64 KiB: anything shorter the egress proxy could not keep out of answers) is read from standard input when it is piped (one trailing newline dropped), else asked for without echo.",
      )
      .argument("<store>", "the store")
      .argument("<KEY>", "the secret's key; sandboxes see CAIRN_SECRET_<KEY>")
      .option(
        "--host <host>",
        "a host where it may be used, inside the store's allowlist (default: all of it); repeat for more",
        collect,
      ),
  ).runs(async (store: string, key: string, options: SetSecretOptions) =>
    (await secrets()).setSecret(store, key, options),
  );
  withConnectionOptions(
    command
      .command("ls")
      .description("Lists the stores, or one store: hosts, keys and times, never a value.")
      .argument("[store]", "only this store")
      .option("--json", "print as JSON"),
  ).runs(async (store: string | undefined, options: ListStoresOptions) =>
    (await secrets()).listStores(store, options),
  );
  withConnectionOptions(
    command
      .command("rm")
      .description("Deletes a secret, or a whole store with its secrets.")
      .argument("<store>", "the store")
      .argument("[KEY]", "the secret; without it, the store"),
  ).runs(async (store: string, key: string | undefined, options: ConnectionOptions) =>
    (await secrets()).remove(store, key, options),
  );
  command
    .command("rotate-key")
    .description(
      "Seals every secret of every project again under a new master key, in one transaction, while the service is stopped (`cairn dev`, or every `cairn serve` instance of a database). With CAIRN_MASTER_KEY set to the current key, the new key is read from standard input when piped (else made and printed once): set it as CAIRN_MASTER_KEY before the next start. Without it, the data directory's master.key is replaced.",
    )
    .option(
      "--data-dir <path>",
      "the data directory of the stopped service (default: CAIRN_DATA_DIR, else ./.cairn)",
    )
    .option(
      "--database <url>",
      "also seal again the secret stores of this PostgreSQL database (cairn serve --database; default: CAIRN_DATABASE_URL); needs CAIRN_MASTER_KEY. Each instance's data directory keeps secrets of its own (its agents' channels): run this once per data directory, piping the same new key each time; the database's values, sealed again by the first run, are left as they are by the next",
    )
    .runs(async (options: RotateKeyOptions) => (await secrets()).rotateKey(options));
}
