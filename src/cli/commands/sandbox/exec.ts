import { execStartedSchema } from "../../../core/wire/exec-protocol.js";
import type { ExecRequest } from "../../../core/wire/exec-request.js";
import { resolveConnection, sandboxJson } from "../../../sandbox/client/http.js";
import { Sandbox, type SandboxConnection } from "../../../sandbox/index.js";
import {
  connectionFrom,
  definedOnly,
  keyValuePairs,
  noneLeft,
  parseCommand,
  required,
  UsageError,
  wholeNumber,
} from "./arguments.js";
import { followExec, type StdinMode, terminalSize } from "./follow.js";

type Write = (text: string) => void;

const execExample = "cairn sandbox exec <id> [-it] [--cwd DIR] [--env K=V] -- <command> [args…]";

/**
 * `exec`: runs a command in the sandbox with its output on this terminal, and exits with its
 * exit code; `--detach` prints the exec id and leaves it running.
 */
export async function execInSandbox(args: readonly string[], write: Write): Promise<number> {
  // Everything after `--` is the command, whose flags are not ours to parse.
  const terminator = args.indexOf("--");
  const { values, positionals } = parseCommand(
    terminator === -1 ? args : args.slice(0, terminator),
    {
      interactive: { type: "boolean", short: "i" },
      tty: { type: "boolean", short: "t" },
      cwd: { type: "string" },
      env: { type: "string", multiple: true },
      "timeout-ms": { type: "string" },
      detach: { type: "boolean", short: "d" },
    },
  );
  const [id, ...before] = positionals;
  const [cmd, ...commandArgs] = [
    ...before,
    ...(terminator === -1 ? [] : args.slice(terminator + 1)),
  ];
  if (cmd === undefined || cmd === "")
    throw new UsageError(`name the command; usage: ${execExample}`);
  const request: ExecRequest = {
    cmd,
    args: commandArgs,
    ...definedOnly({
      env: values.env === undefined ? undefined : keyValuePairs(values.env, "--env"),
      cwd: values.cwd,
      pty: values.tty ? terminalSize() : undefined,
      timeoutMs: wholeNumber(values["timeout-ms"], "--timeout-ms"),
    }),
  };
  const connection = connectionFrom(values);
  const sandbox = await Sandbox.connect(required(id, execExample), connection);
  const started = await startExec(connection, sandbox.id, request);
  if (values.detach) {
    // Like `docker run -d`: a detached command reads no stdin unless -i keeps it open for `attach -i`.
    if (!values.interactive) {
      const handle = await sandbox.attach(started.execId, { token: started.token });
      handle.closeStdin();
      handle.detach();
    }
    write(`${started.execId}\n`);
    return 0;
  }
  return followExec({
    sandbox,
    execId: started.execId,
    token: started.token,
    stdin: stdinMode(values.interactive === true, values.tty === true),
    resize: values.tty === true,
    interrupt: "forward",
  });
}

const attachExample = "cairn sandbox attach <id> <exec-id> [--since N] [-i]";

/** `attach`: replays an exec's output from --since, then follows it live to its exit code. */
export async function attachToExec(args: readonly string[], _write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    since: { type: "string" },
    interactive: { type: "boolean", short: "i" },
    // Taken so that `attach -it` reads like `exec -it`: whether there is a terminal is the exec's.
    tty: { type: "boolean", short: "t" },
  });
  const [id, execId, ...extra] = positionals;
  noneLeft(extra, attachExample);
  const since = wholeNumber(values.since, "--since") ?? 0;
  const exec = required(execId, attachExample);
  const sandbox = await Sandbox.connect(required(id, attachExample), connectionFrom(values));
  const record = await sandbox.execRecord(exec);
  if (since > record.outputBytes) {
    throw new Error(
      `--since ${since} is past the end of the output (${record.outputBytes} bytes so far)`,
    );
  }
  const interactive = values.interactive === true;
  return followExec({
    sandbox,
    execId: record.execId,
    token: record.token,
    since,
    stdin: interactive ? stdinMode(true, record.pty) : "leave",
    resize: interactive && record.pty,
    // Attaching watches a command someone else started: Ctrl-C leaves, it does not stop it.
    interrupt: "detach",
  });
}

function stdinMode(interactive: boolean, tty: boolean): StdinMode {
  if (interactive) return tty ? "terminal" : "forward";
  // Without -i a terminal's stdin is not the command's (it would wait for input forever), but
  // input piped in is meant for it.
  return process.stdin.isTTY ? "close" : "forward";
}

/**
 * POST …/exec directly: `Sandbox.exec()` returns a handle without the exec id, and the id is
 * what `--detach` prints and what a dropped connection tells the user to re-attach with.
 */
function startExec(
  connection: SandboxConnection,
  sandboxId: string,
  request: ExecRequest,
): Promise<{ execId: string; token: string }> {
  return sandboxJson(
    resolveConnection(connection),
    "POST",
    `/api/sandboxes/${sandboxId}/exec`,
    execStartedSchema,
    { json: request },
  );
}
