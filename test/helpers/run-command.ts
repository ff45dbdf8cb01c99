import { spawn } from "node:child_process";

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command in a child process, with `env` over this one's, and collects what it printed
 * and its exit code; killed after a minute. Not spawnSync: a service under test in this process
 * must keep answering meanwhile.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Finished> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
