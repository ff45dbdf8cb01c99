import { InvalidArgumentError, Option } from "commander";
import { type SandboxStatus, sandboxStatuses } from "../../core/wire/sandbox-statuses.js";
import { sandboxTokenScopes } from "../../core/wire/sandbox-token-scopes.js";
import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";
import { durationSeconds, keyValuePair, wholeNumber } from "./values.js";

export interface CreateOptions extends ConnectionOptions {
  readonly template?: string;
  readonly timeout?: number;
  readonly cpu?: number;
  readonly memory?: number;
  readonly disk?: number;
  readonly tag?: Readonly<Record<string, string>>;
  readonly secretStore?: string;
  readonly json?: boolean;
}

export interface ListOptions extends ConnectionOptions {
  readonly tag?: string;
  readonly status?: SandboxStatus;
  readonly json?: boolean;
}

export interface ExecOptions extends ConnectionOptions {
  readonly interactive?: boolean;
  readonly tty?: boolean;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly detach?: boolean;
}

export interface AttachOptions extends ConnectionOptions {
  readonly since?: number;
  readonly interactive?: boolean;
}

export interface TagsOptions extends ConnectionOptions {
  readonly clear?: boolean;
  readonly json?: boolean;
}

export interface ResizeOptions extends ConnectionOptions {
  readonly cpu?: number;
  readonly memory?: number;
  readonly timeout?: number;
  readonly json?: boolean;
}

export interface UsageOptions extends ConnectionOptions {
  readonly periodStart?: string;
  readonly periodEnd?: string;
  readonly groupBy?: string;
  readonly atTime?: boolean;
  readonly json?: boolean;
}

export interface JsonOptions extends ConnectionOptions {
  readonly json?: boolean;
}

export interface SignedUrlOptions extends JsonOptions {
  readonly put?: boolean;
  /** Seconds. */
  readonly expires?: number;
  readonly maxBytes?: number;
}

export interface TokenOptions extends JsonOptions {
  readonly scope: readonly string[];
  /** Seconds. */
  readonly expires?: number;
  readonly origin?: string;
}

/** Each use of `--scope` adds one, checked against the scopes a token may have. */
function scopeList(value: string, previous: readonly string[] | undefined): string[] {
  if (!(sandboxTokenScopes as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`It must be one of ${sandboxTokenScopes.join(", ")}.`);
  }
  return [...(previous ?? []), value];
}

const manage = () => import("../commands/sandbox/manage.js");

/** Declares `cairn sandbox` and its subcommands. */
export function addSandboxCommand(program: CairnCommand): void {
  const sandbox = program
    .command("sandbox")
    .summary(
      "create, list, exec in, attach to, copy files to and from, share, tag, resize and stop sandboxes",
    )
    .description(
      "Sandboxes of a running Cairn service; the service's defaults apply to what is not given. Times are UTC.",
    );
  const subcommand = (name: string, summary: string, details = "") =>
    sandbox
      .command(name)
      .summary(summary)
      .description(details === "" ? `${summary}.` : `${summary}. ${details}`);
  const json = "print the record as JSON";
  const withSize = (command: CairnCommand) =>
    command
      .option("--cpu <count>", "vCPUs", wholeNumber)
      .option("--memory <MB>", "memory, one of the tiers", wholeNumber);

  withConnectionOptions(
    withSize(subcommand("create", "Creates a sandbox and prints its id"))
      .option("--disk <MB>", "disk size", wholeNumber)
      .option("--template <name>", "the template to start from")
      .option("--timeout <seconds>", "how long it lives before it expires", wholeNumber)
      .option("--tag <key=value>", "a tag; repeat for more", keyValuePair)
      .option(
        "--secret-store <name>",
        "the secret store whose hosts it may reach and whose secrets its requests may use (cairn secrets)",
      )
      .option("--json", json),
  ).runs(async (options: CreateOptions) => (await manage()).createSandbox(options));

  withConnectionOptions(
    subcommand("ls", "Lists the project's sandboxes, newest first")
      .option("--tag <key[=value]>", "only the sandboxes with this tag (and value)")
      .addOption(
        new Option("--status <status>", "only the sandboxes in this status").choices(
          sandboxStatuses,
        ),
      )
      .option("--json", "print the records as JSON"),
  ).runs(async (options: ListOptions) => (await manage()).listSandboxes(options));

  withConnectionOptions(
    subcommand(
      "exec",
      "Runs a command in the sandbox, streams its output here, and exits with its exit code",
      "A signal that ended it gives 128 + the signal's number. Piped input goes to its stdin. Without -it, Ctrl-C sends SIGINT to the command and a second Ctrl-C detaches.",
    )
      .usage("[options] <id> -- <command> [args…]")
      .argument("<id>", "the sandbox")
      .argument("<command...>", "the command and its arguments, after --")
      .option("-i, --interactive", "send this terminal's input to the command until it exits")
      .option("-t, --tty", "give the command a terminal (with -i: keystrokes, Ctrl-C included)")
      .option("--cwd <dir>", "the working directory in the sandbox (default: /workspace)")
      .option("--env <key=value>", "an environment variable; repeat for more", keyValuePair)
      .option("--timeout-ms <ms>", "kill the command after this long", wholeNumber)
      .option(
        "-d, --detach",
        "print the exec id and leave the command running (see attach); it reads no stdin unless -i",
      ),
  ).runs(async (id: string, command: string[], options: ExecOptions) =>
    (await import("../commands/sandbox/exec.js")).execInSandbox(id, command, options),
  );

  withConnectionOptions(
    subcommand(
      "attach",
      "Replays an exec's output, then follows it live and exits with its exit code",
      "Ctrl-C leaves the command running.",
    )
      .argument("<id>", "the sandbox")
      .argument("<exec-id>", "the exec, as `exec --detach` printed it")
      .option(
        "--since <offset>",
        "the output byte to replay from (default: the start)",
        wholeNumber,
      )
      .option("-i, --interactive", "send this terminal's input to the command")
      // So that `attach -it` reads like `exec -it`: whether there is a terminal is the exec's.
      .addOption(new Option("-t, --tty").hideHelp()),
  ).runs(async (id: string, execId: string, options: AttachOptions) =>
    (await import("../commands/sandbox/exec.js")).attachToExec(id, execId, options),
  );

  withConnectionOptions(
    subcommand(
      "cp",
      "Copies one file, streamed, between here and a sandbox",
      "`cp <id>:<path> <local path>` downloads, `cp <local path> <id>:<path>` uploads. A path in the sandbox is under /workspace (relative paths too); `-` is stdin or stdout; a local path with a colon is written ./name:….",
    )
      .argument("<source>", "<id>:<path>, a local path, or -")
      .argument("<target>", "<id>:<path>, a local path, or -"),
  ).runs(async (source: string, target: string, options: ConnectionOptions) =>
    (await import("../commands/sandbox/copy.js")).copyFile(source, target, options),
  );

  withConnectionOptions(
    subcommand("tags", "Prints the sandbox's tags, or replaces them with the pairs given")
      .argument("<id>", "the sandbox")
      .argument("[key=value...]", "the new tags", keyValuePair)
      .option("--clear", "remove every tag")
      .option("--json", "print the tags as JSON"),
  ).runs(
    // Commander gives an optional variadic argument that was not given as [].
    async (id: string, tags: Record<string, string> | [], options: TagsOptions) =>
      (await manage()).sandboxTags(id, Array.isArray(tags) ? undefined : tags, options),
  );

  withConnectionOptions(
    withSize(
      subcommand("resize", "Changes the sandbox's CPU and memory while it runs, or its lifetime"),
    )
      .argument("<id>", "the sandbox")
      .option("--timeout <seconds>", "expire this many seconds from now", wholeNumber)
      .option("--json", json),
  ).runs(async (id: string, options: ResizeOptions) => (await manage()).resizeSandbox(id, options));

  withConnectionOptions(
    subcommand("usage", "Reports what the project's sandboxes used and cost over a period")
      .option("--period-start <YYYY-MM-DD>", "the first day")
      .option("--period-end <YYYY-MM-DD>", "the last day, included")
      .option("--group-by <grouping>", "tag:<key>, sandbox or template")
      .option("--at-time", "group by the tags at the time, not the current ones")
      .option("--json", "print the report as JSON"),
  ).runs(async (options: UsageOptions) =>
    (await import("../commands/sandbox/usage.js")).sandboxUsage(options),
  );

  withConnectionOptions(
    subcommand(
      "url",
      "Prints a URL that reads a file of the sandbox without an API key, or with --put writes it once",
      "Anything else (expired, changed, another path) gets 403. The path is under /workspace.",
    )
      .argument("<id>", "the sandbox")
      .argument("<path>", "the file, under /workspace (relative paths too)")
      .option("--put", "a URL that writes the file (once) instead of reading it")
      .option(
        "--expires <duration>",
        "how long it works: 90s, 10m, 1h, up to 24h (default 15m)",
        durationSeconds,
      )
      .option("--max-bytes <count>", "with --put: the most bytes the upload may have", wholeNumber)
      .option("--json", "print the URL with its method, path and expiry as JSON"),
  ).runs(async (id: string, path: string, options: SignedUrlOptions) =>
    (await import("../commands/sandbox/access.js")).signedUrl(id, path, options),
  );

  withConnectionOptions(
    subcommand(
      "token",
      "Prints a token that reaches this one sandbox, for a web page instead of the API key",
      "Scopes: read (download, stat, list), write (upload, mkdir, move, delete), exec (run and follow commands). Its value is shown this once.",
    )
      .argument("<id>", "the sandbox")
      .requiredOption("--scope <scope>", "read, write or exec; repeat for more", scopeList)
      .option(
        "--expires <duration>",
        "how long it works: 90s, 10m, 1h, up to 24h (default 1h)",
        durationSeconds,
      )
      .option(
        "--origin <origin>",
        "the one page origin it works from, such as https://app.example.com",
      )
      .option("--json", "print the token with its id, scopes and expiry as JSON"),
  ).runs(async (id: string, options: TokenOptions) =>
    (await import("../commands/sandbox/access.js")).sandboxToken(id, options),
  );

  withConnectionOptions(
    subcommand("kill", "Stops the sandbox and prints the status it ended in")
      .argument("<id>", "the sandbox")
      .option("--json", json),
  ).runs(async (id: string, options: JsonOptions) => (await manage()).killSandbox(id, options));
}
