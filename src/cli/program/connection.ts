import type { CairnCommand } from "./cairn-command.js";

/** The options of every command that talks to a running service. */
export interface ConnectionOptions {
  readonly endpoint?: string;
  readonly apiKey?: string;
  readonly dataDir?: string;
}

/** Declares {@link ConnectionOptions} on `command`, under a heading of their own. */
export function withConnectionOptions(command: CairnCommand): CairnCommand {
  return command
    .optionsGroup("Service options:")
    .option(
      "--endpoint <url>",
      "the Cairn service (default: CAIRN_ENDPOINT, else the local `cairn dev` at http://127.0.0.1:7070)",
    )
    .option(
      "--api-key <key>",
      "the project's API key (default: CAIRN_API_KEY, else the key `cairn dev` saved in its data directory)",
    )
    .option(
      "--data-dir <path>",
      "the data directory of `cairn dev` whose saved key to use (default: CAIRN_DATA_DIR, else ./.cairn)",
    );
}
