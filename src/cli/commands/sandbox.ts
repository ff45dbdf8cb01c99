import { UsageError } from "./sandbox/arguments.js";
import { copyFile } from "./sandbox/copy.js";
import { attachToExec, execInSandbox } from "./sandbox/exec.js";
import {
  createSandbox,
  killSandbox,
  listSandboxes,
  resizeSandbox,
  sandboxTags,
} from "./sandbox/manage.js";
import { sandboxUsage } from "./sandbox/usage.js";

export const sandboxHelp = `Usage:
  cairn sandbox create [--template base] [--timeout 300] [--cpu 1] [--memory 1024] [--disk MB]
                       [--tag key=value …] [--json]
  cairn sandbox ls [--tag key[=value]] [--status running|stopped|…] [--json]
  cairn sandbox exec <id> [-it] [--cwd DIR] [--env K=V …] [--timeout-ms N] [--detach]
                     -- <command> [args…]
  cairn sandbox attach <id> <exec-id> [--since N] [-i]
  cairn sandbox cp <id>:<path> <local path>|-     cairn sandbox cp <local path>|- <id>:<path>
  cairn sandbox tags <id> [key=value …] [--clear] [--json]
  cairn sandbox resize <id> [--cpu N] [--memory MB] [--timeout SECONDS] [--json]
  cairn sandbox usage [--period-start YYYY-MM-DD] [--period-end YYYY-MM-DD]
                      [--group-by tag:<key>|sandbox|template] [--at-time] [--json]
  cairn sandbox kill <id> [--json]

exec streams the command's output here and exits with its exit code (128 + the signal's number
when a signal ended it). Piped input goes to its stdin; -it gives it a terminal and sends your
keystrokes (Ctrl-C included) until it exits. Without -it, Ctrl-C sends SIGINT to the command and
a second Ctrl-C detaches. --detach prints the exec id and leaves the command running; attach
replays its output from --since (default: the start) and follows it, -i with your keystrokes.
cp copies one file, streamed: a path in the sandbox is under /workspace (relative paths too),
\`-\` is stdin or stdout, and a local path with a colon is written ./name:…. resize changes CPU
and memory live; --timeout makes it expire that many seconds from now. usage groups by the
current tags, or with --at-time by the tags at the time. Times are UTC. Options --endpoint,
--api-key, --data-dir as for \`cairn traces\`.
`;

const subcommands: Readonly<
  Record<string, (args: readonly string[], write: (text: string) => void) => Promise<number>>
> = {
  create: createSandbox,
  ls: listSandboxes,
  exec: execInSandbox,
  attach: attachToExec,
  cp: copyFile,
  tags: sandboxTags,
  resize: resizeSandbox,
  usage: sandboxUsage,
  kill: killSandbox,
};

/** `cairn sandbox …`: create, run commands in, copy files to and from, and stop sandboxes. */
export async function sandbox(
  args: readonly string[],
  write: (text: string) => void,
): Promise<number> {
  const [name, ...rest] = args;
  // A -h meant for the command after `--` is the command's.
  const ours = args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
  if (name === undefined) {
    process.stderr.write(`cairn sandbox: name a subcommand\n\n${sandboxHelp}`);
    return 2;
  }
  if (name === "help" || ours.includes("-h") || ours.includes("--help")) {
    write(sandboxHelp);
    return 0;
  }
  const run = Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (run === undefined) {
    process.stderr.write(`cairn sandbox: unknown subcommand "${name}"\n\n${sandboxHelp}`);
    return 2;
  }
  try {
    return await run(rest, write);
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      process.stderr.write(`cairn sandbox: ${(error as Error).message}\n\n${sandboxHelp}`);
      return 2;
    }
    process.stderr.write(
      `cairn sandbox: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}
