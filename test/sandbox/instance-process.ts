// A service instance in a process of its own (test/fixtures/sandbox/instance.ts), for the tests
// that kill one of several instances on a shared PostgreSQL database with SIGKILL.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerOptions } from "cairn-ai/server";

const fixture = fileURLToPath(new URL("../fixtures/sandbox/instance.ts", import.meta.url));

export interface InstanceProcess {
  /** Where it serves. */
  readonly url: string;
  /** Kills it with SIGKILL, and resolves once it has exited. */
  kill(): Promise<void>;
  /** Kills it if it still runs, and removes its data directory. */
  remove(): Promise<void>;
  /** Kills it if it still runs, and starts it again on the same data directory. */
  restart(): Promise<InstanceProcess>;
}

/**
 * Starts an instance with `options` in a new data directory (or `folder`); fails with its
 * output if it does not start.
 */
export async function startInstanceProcess(
  options: ServerOptions,
  folder = mkdtempSync(join(tmpdir(), "cairn-instance-")),
): Promise<InstanceProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", fixture, folder, JSON.stringify(options)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = once(child, "exit");
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  const remove = async () => {
    await kill();
    rmSync(folder, { recursive: true, force: true });
  };
  let output = "";
  const ready = new Promise<string | undefined>((resolve) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /ready (\S+)\n/.exec(output)?.[1];
      if (url !== undefined) resolve(url);
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    void exited.then(() => resolve(undefined));
  });
  const url = await ready;
  if (url === undefined) {
    await remove();
    throw new Error(`the instance did not start: ${output}`);
  }
  return {
    url,
    kill,
    remove,
    restart: async () => {
      await kill();
      return await startInstanceProcess(options, folder);
    },
  };
}
