// Runs the Cairn service in a child process for a benchmark, so that the client's work (encoding
// bodies, fetch, timing) does not share the service's event loop: on loopback, as a separate
// process would be in production. BENCH_SERVER_CPU_PROF=<dir> writes a CPU profile of the service
// to that folder (node --cpu-prof) when it closes.

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** CPU time (user + system) the service process has used so far, in ms. */
  cpuMs(): Promise<number>;
  /** Closes the service (requests in flight finish, the database is closed) and waits for exit. */
  close(): Promise<void>;
}

const entry = fileURLToPath(new URL("./serve.ts", import.meta.url));
const startTimeoutMs = 30_000;
const closeTimeoutMs = 60_000;

export async function startServerProcess(options: {
  dataDir: string;
  apiKey: string;
  /** createServer({ sandboxes }) options, for the sandbox bench. */
  sandboxes?: Record<string, unknown>;
  /** createServer({ dashboard }): the dashboard bench serves its own build. */
  dashboard?: { directory: string };
  /** createServer({ egress }): names that sandboxes reach at a local address (the agents bench). */
  egress?: { hosts: Record<string, string> };
  /** createServer({ database }): a PostgreSQL store (the postgres bench). */
  database?: string;
  /** createServer({ masterKey }): the same for several instances on one database. */
  masterKey?: string;
  /** CAIRN_LOG_LEVEL of the service: "warn" keeps a line per egress request off the output. */
  logLevel?: "error" | "warn" | "info" | "debug";
}): Promise<ServerProcess> {
  const { logLevel, ...settings } = options;
  const execArgv = benchExecArgv();
  const profileDir = process.env.BENCH_SERVER_CPU_PROF;
  if (profileDir) execArgv.push("--cpu-prof", `--cpu-prof-dir=${profileDir}`);
  const child = fork(entry, [JSON.stringify(settings)], {
    execArgv,
    ...(logLevel === undefined ? {} : { env: { ...process.env, CAIRN_LOG_LEVEL: logLevel } }),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`bench: the service did not start within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once("message", (message) => {
      clearTimeout(timer);
      resolve((message as { url: string }).url);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`bench: the service exited (code ${code}) before it was ready`));
    });
  });
  return {
    url,
    pid: child.pid as number,
    cpuMs: () =>
      new Promise<number>((resolve) => {
        const onMessage = (message: unknown) => {
          const cpu = (message as { cpu?: NodeJS.CpuUsage }).cpu;
          if (cpu === undefined) return;
          child.off("message", onMessage);
          resolve((cpu.user + cpu.system) / 1000);
        };
        child.on("message", onMessage);
        child.send("cpu");
      }),
    close: () => closeChild(child, exited),
  };
}

/** Throws, with the service's reason, where its sandbox runner cannot run on this machine. */
export async function requireSandboxes(url: string, apiKey: string): Promise<void> {
  const probe = await fetch(`${url}/api/sandboxes`, { headers: { "x-api-key": apiKey } });
  if (probe.status !== 200) {
    throw new Error(`bench: sandboxes cannot run here: ${(await probe.json()).message}`);
  }
}

/** Node's flags for a benchmark's child process: this one's, with tsx's loader. */
export function benchExecArgv(): string[] {
  // `npm run bench` runs under tsx, whose loader is in execArgv; outside tsx, add it.
  return process.execArgv.some((arg) => arg.includes("tsx"))
    ? [...process.execArgv]
    : [...process.execArgv, "--import", "tsx"];
}

async function closeChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.send("close");
  const timer = setTimeout(() => child.kill("SIGKILL"), closeTimeoutMs);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`bench: the service exited with code ${code}`);
}
