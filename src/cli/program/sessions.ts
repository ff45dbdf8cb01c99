import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";
import { wholeNumberFrom } from "./values.js";

/** The options of `cairn sessions list`. */
export interface SessionListOptions extends ConnectionOptions {
  readonly limit: number;
  readonly tag?: string;
}

/** Declares `cairn sessions list` and `cairn sessions show`. */
export function addSessionsCommand(program: CairnCommand): void {
  const sessions = program
    .command("sessions")
    .summary("list the sessions of a running service, or print one turn by turn")
    .description("Reads sessions (runs of related traces) from a running Cairn service.");
  withConnectionOptions(
    sessions
      .command("list")
      .description("Lists the project's sessions of the last 30 days, the last active first.")
      .option("--limit <count>", "how many sessions, 1 to 200", wholeNumberFrom(1, 200), 20)
      .option("--tag <tag>", "only the sessions with a trace that has this tag"),
  ).runs(async (options: SessionListOptions) =>
    (await import("../commands/sessions.js")).list(options),
  );
  withConnectionOptions(
    sessions
      .command("show")
      .description("Prints a session's totals, its traces oldest first, and its events.")
      .argument("<session-id>", "the session id"),
  ).runs(async (sessionId: string, options: ConnectionOptions) =>
    (await import("../commands/sessions.js")).show(sessionId, options),
  );
}
