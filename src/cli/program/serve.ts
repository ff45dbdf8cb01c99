import type { CairnCommand } from "./cairn-command.js";
import { type ServiceOptions, withServiceOptions } from "./service-options.js";

/** The options of `cairn serve`. */
export type ServeOptions = ServiceOptions;

/** Declares `cairn serve`. */
export function addServeCommand(program: CairnCommand): void {
  withServiceOptions(
    program
      .command("serve")
      .summary("run the Cairn service in production: configured by flags and environment only")
      .description(
        "Runs the Cairn service without cairn dev's conveniences: no key is printed or saved, no sign-in link is made. Any number of instances may share one PostgreSQL database (--database) behind a load balancer.",
      ),
  )
    .addHelpText(
      "after",
      `
The first start on an empty store needs CAIRN_API_KEY: the key of the first
project (16 to 256 letters, digits, '_', '-' or '.'); later starts ignore it.
The master key that seals secret values comes from CAIRN_MASTER_KEY (every
instance sharing a database needs the same one), else <data-dir>/master.key.
Several instances on one host each take a --port and a --data-dir of their
own; keep each data directory: it holds the sandboxes and agents it runs.
Problems are one line each on stderr. SIGINT or SIGTERM stops gracefully; a
second one cuts the connections off.`,
    )
    .runs(async (options: ServeOptions) => (await import("../commands/serve.js")).serve(options));
}
