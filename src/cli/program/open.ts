import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";

/** The options of `cairn open`. */
export interface OpenOptions extends ConnectionOptions {
  /** False with --no-browser. */
  readonly browser: boolean;
}

/** Declares `cairn open`. */
export function addOpenCommand(program: CairnCommand): void {
  withConnectionOptions(
    program
      .command("open")
      .summary("print a one-time sign-in link to the dashboard, and open it in the browser")
      .description(
        "Asks the running service for a one-time link that signs this browser in to the project's dashboard, prints it, and opens it in the browser when there is one.",
      )
      .option("--no-browser", "only print the link"),
  )
    .addHelpText(
      "after",
      `
The link works once, within 10 minutes; the session it starts lasts 7 days.
The browser is not opened when stdout is not a terminal, under CI, or on a
Linux without a display; the link is printed either way.`,
    )
    .runs(async (options: OpenOptions) => (await import("../commands/open.js")).open(options));
}
