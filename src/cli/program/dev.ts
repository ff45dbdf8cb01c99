import type { CairnCommand } from "./cairn-command.js";
import { type ServiceOptions, withServiceOptions } from "./service-options.js";

/** The options of `cairn dev`. */
export type DevOptions = ServiceOptions;

/** Declares `cairn dev`. */
export function addDevCommand(program: CairnCommand): void {
  withServiceOptions(
    program
      .command("dev")
      .summary("run the Cairn service: the observability API and the sandbox runner")
      .description(
        "Runs the Cairn service on the embedded store: the observability API and the sandbox runner.",
      ),
  )
    .addHelpText(
      "after",
      `
At first start the service creates a project and its API key (CAIRN_API_KEY if
set), prints the key once and saves it in the data directory for local tools.
At every start it prints a one-time link that signs a browser in to the
dashboard (at /ui/) for that key's project; \`cairn open\` prints another.
Problems are one line each on stderr. The first SIGINT or SIGTERM stops
gracefully (requests finish, sandboxes stop); a second one cuts the connections
off.`,
    )
    .runs(async (options: DevOptions) => (await import("../commands/dev.js")).dev(options));
}
