import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const fixture = fileURLToPath(new URL("../fixtures/sandbox/service.ts", import.meta.url));
const children = new Set<ChildProcess>();

/** Kills every service started here that is still running: a failed test leaves none behind. */
export async function killServices(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    }),
  );
  children.clear();
}

export interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly apiKey: string;
  readonly stderr: () => string;
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * The service in a process of its own (test/fixtures/sandbox/service.ts), as `cairn dev` or as
 * an app that embeds it; `sandboxes` adds runner options. Resolves once it serves.
 */
export async function startService(
  flavor: "dev" | "embedded",
  dataDir: string,
  sandboxes: Record<string, unknown> = {},
): Promise<Running> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fixture, flavor, dataDir, JSON.stringify(sandboxes)],
    {
      env: { ...process.env, CAIRN_API_KEY: "service-key-0123456789" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  child.once("exit", () => children.delete(child));
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const deadline = Date.now() + 30_000;
  while (!/ready (\S+)\n/.test(stdout)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the service did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = /ready (\S+)\n/.exec(stdout)?.[1] as string;
  const apiKey = readFileSync(join(dataDir, "api-key"), "utf8").trim();
  return { child, url, apiKey, stderr: () => stderr, exited };
}
