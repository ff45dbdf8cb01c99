import { Option } from "commander";
import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";
import { wholeNumberFrom } from "./values.js";

/** The options of `cairn traces list`. */
export interface ListOptions extends ConnectionOptions {
  readonly limit: number;
  readonly session?: string;
  readonly tag?: string;
  readonly service?: string;
  readonly status?: "ok" | "error";
}

/** Declares `cairn traces list` and `cairn traces show`. */
export function addTracesCommand(program: CairnCommand): void {
  const traces = program
    .command("traces")
    .summary("list the traces of a running service, or print one as a tree")
    .description("Reads traces from a running Cairn service.");
  withConnectionOptions(
    traces
      .command("list")
      .description("Lists the project's recent traces, newest first, as a table.")
      .option("--limit <count>", "how many traces, 1 to 200", wholeNumberFrom(1, 200), 20)
      .option("--session <id>", "only the traces of this session")
      .option("--tag <tag>", "only the traces with this tag")
      .option("--service <name>", "only the traces with spans from this service (service.name)")
      .addOption(
        new Option("--status <status>", "only the traces that succeeded, or that failed").choices([
          "ok",
          "error",
        ]),
      ),
  ).runs(async (options: ListOptions) => (await import("../commands/traces.js")).list(options));
  withConnectionOptions(
    traces
      .command("show")
      .description("Prints a trace as a tree of its spans, with durations, tokens and costs.")
      .argument("<trace-id>", "the trace, tr_ and 32 hex digits"),
  ).runs(async (traceId: string, options: ConnectionOptions) =>
    (await import("../commands/traces.js")).show(traceId, options),
  );
}
