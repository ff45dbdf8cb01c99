import { spawn } from "node:child_process";

/** What a housekeeping command is given besides its arguments. */
export interface HostCommandOptions {
  readonly env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Runs one of the runner's housekeeping commands (truncate, mkfs.ext4, mount, umount, e2fsck,
 * losetup) in a process group of its own, and resolves with its output once it exits 0. A Ctrl-C
 * at the service's terminal goes to the terminal's whole process group: without this, it killed
 * a mkfs or a mount half-way, while the service's own stop, which decides what becomes of that
 * work, was only beginning.
 */
export function hostCommand(
  file: string,
  args: readonly string[],
  options: HostCommandOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) {
        resolve({ stdout, stderr });
        return;
      }
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      const said = stderr.trim();
      reject(
        Object.assign(
          new Error(
            `Command failed: ${[file, ...args].join(" ")} (${how})${said === "" ? "" : `: ${said}`}`,
          ),
          { code, signal, stdout, stderr },
        ),
      );
    });
  });
}
