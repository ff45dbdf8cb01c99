import { CommanderError } from "commander";
import { sdkVersion } from "../../tracing/sdk-info.js";
import { addAgentCommand } from "./agent.js";
import { CairnCommand, usageExitCode } from "./cairn-command.js";
import { addDevCommand } from "./dev.js";
import { addDoctorCommand } from "./doctor.js";
import { addOpenCommand } from "./open.js";
import { addSandboxCommand } from "./sandbox.js";
import { addSecretsCommand } from "./secrets.js";
import { addServeCommand } from "./serve.js";
import { addSessionsCommand } from "./sessions.js";
import { addTestCommand } from "./test.js";
import { addTracesCommand } from "./traces.js";

const exitCodes = `
Exit codes, the same for every command:
  0  it succeeded
  1  the operation failed; stderr says why: "cairn <command>: <message>"
  2  wrong usage: an unknown command or option, a missing or bad argument
     (the message, then the command's help)
Commands whose help says so add their own: \`cairn test\` exits 1 when a
threshold is missed and 2 when the test file is wrong; \`cairn sandbox exec\`
and \`attach\` exit with the remote command's code (128 + the signal's number
when a signal ended it); \`cairn doctor\` exits 1 when a required check fails;
\`cairn agent\` exits 3 when the model endpoint answered 4xx, 4 on a conflict
and 5 on a transient failure.

Run \`cairn <command> --help\` for a command's options.`;

/**
 * The `cairn` command line: every command and option declared here, the help generated from
 * them. Each command's module is imported only when the command runs.
 */
export function createProgram(): CairnCommand {
  const program = new CairnCommand("cairn");
  // Settings every subcommand inherits, so set before any is added.
  program
    .exitOverride()
    .enablePositionalOptions()
    .showHelpAfterError()
    .helpOption("-h, --help", "show this help")
    .helpCommand("help [command]", "show a command's help")
    .usage("<command> [options]")
    .description(`Observability and sandboxes for AI applications (cairn-ai ${sdkVersion}).`)
    .version(sdkVersion, "-v, --version", "print the version")
    .addHelpText("after", exitCodes);
  addDevCommand(program);
  addServeCommand(program);
  addOpenCommand(program);
  addTracesCommand(program);
  addSessionsCommand(program);
  addTestCommand(program);
  addDoctorCommand(program);
  addSandboxCommand(program);
  addSecretsCommand(program);
  addAgentCommand(program);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function main(args: readonly string[]): Promise<number> {
  const program = createProgram();
  if (args.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...args], { from: "user" });
    return program.exitCode;
  } catch (error) {
    // Commander has printed the message (and the help); --help and --version end here too.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : usageExitCode;
    throw error;
  }
}
