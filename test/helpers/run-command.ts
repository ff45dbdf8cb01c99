import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command in a child process, with `env` over this one's, and collects what it printed
 * and its exit code; killed after a minute. `input` is piped to its stdin (else it has none).
 * Not spawnSync: a service under test in this process must keep answering meanwhile.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  input?: string,
): Promise<Finished> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] as const,
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  child.stdin?.end(input);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
