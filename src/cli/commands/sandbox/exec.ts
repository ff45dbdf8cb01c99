import { Sandbox } from "../../../sandbox/index.js";
import type { AttachOptions, ExecOptions } from "../../program/sandbox.js";
import { followExec, type StdinMode, terminalOutput, terminalSize } from "./follow.js";
import { connectionFrom, definedOnly } from "./options.js";

/**
 * `exec`: runs a command in the sandbox with its output on this terminal, and exits with its
 * exit code; `--detach` prints the exec id and leaves it running.
 */
export async function execInSandbox(
  id: string,
  [command = "", ...args]: readonly string[],
  options: ExecOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const handle = await sandbox.exec(command, {
    args,
    ...definedOnly({
      env: options.env,
      cwd: options.cwd,
      pty: options.tty ? terminalSize() : undefined,
      timeoutMs: options.timeoutMs,
    }),
    // Detached, the output stays with the runner for `attach`.
    ...(options.detach ? {} : terminalOutput),
  });
  if (options.detach) {
    // Like `docker run -d`: a detached command reads no stdin unless -i keeps it open for `attach -i`.
    if (!options.interactive) handle.closeStdin();
    handle.detach();
    write(`${handle.execId}\n`);
    return 0;
  }
  return followExec({
    sandbox,
    handle,
    stdin: stdinMode(options.interactive === true, options.tty === true),
    resize: options.tty === true,
    interrupt: "forward",
  });
}

/** `attach`: replays an exec's output from --since, then follows it live to its exit code. */
export async function attachToExec(
  id: string,
  execId: string,
  options: AttachOptions,
): Promise<number> {
  const since = options.since ?? 0;
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const record = await sandbox.execRecord(execId);
  if (since > record.outputBytes) {
    throw new Error(
      `--since ${since} is past the end of the output (${record.outputBytes} bytes so far)`,
    );
  }
  const handle = await sandbox.attach(record.execId, {
    token: record.token,
    since,
    ...terminalOutput,
  });
  const interactive = options.interactive === true;
  return followExec({
    sandbox,
    handle,
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
