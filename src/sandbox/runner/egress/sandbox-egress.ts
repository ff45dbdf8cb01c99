import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { SandboxEntry } from "../enter.js";
import type { EgressHosts } from "./addresses.js";
import type { EgressPolicySource } from "./policy.js";
import { EgressProxy, type EgressRecord } from "./proxy.js";

/** The port of the proxy inside every sandbox, on 127.0.0.1. */
export const egressPort = 3128;

/**
 * What every process of a sandbox gets so that HTTP clients use its proxy: curl, wget, Python's
 * requests and urllib, Go, and Node (NODE_USE_ENV_PROXY, Node 24) read these.
 */
export function egressEnvironment(): Record<string, string> {
  const proxy = `http://127.0.0.1:${egressPort}`;
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: "localhost,127.0.0.1",
    no_proxy: "localhost,127.0.0.1",
    NODE_USE_ENV_PROXY: "1",
  };
}

/** A sandbox's proxy and relay, stopped together. */
export interface EgressAttachment {
  close(): Promise<void>;
}

export interface SandboxEgressOptions {
  /** The built relay (native/cairn-relay.c). */
  readonly relay: string;
  /** Where the proxies' sockets go (the runner's runtime folder). */
  readonly runtimeDir: string;
  readonly policyFor: EgressPolicySource;
  readonly hosts: EgressHosts;
  readonly onRecord?: (record: EgressRecord) => void;
}

/**
 * Gives each sandbox its egress: a proxy on a Unix socket of its own, and the relay that listens
 * on 127.0.0.1:3128 in the sandbox's network namespace and passes connections to it.
 */
export class SandboxEgress {
  constructor(private readonly options: SandboxEgressOptions) {}

  async attach(sandboxId: string, entry: SandboxEntry): Promise<EgressAttachment> {
    const socketPath = join(
      this.options.runtimeDir,
      "egress",
      randomBytes(12).toString("hex"),
      "proxy.sock",
    );
    const proxy = await EgressProxy.start(socketPath, {
      sandboxId,
      policyFor: this.options.policyFor,
      hosts: this.options.hosts,
      ...(this.options.onRecord === undefined ? {} : { onRecord: this.options.onRecord }),
    });
    let relay: ChildProcess | undefined;
    try {
      relay = spawn(
        this.options.relay,
        [String(entry.innerPid), String(entry.usernsInode), String(egressPort), socketPath],
        { stdio: ["ignore", "pipe", "pipe"], env: {} },
      );
      await listening(relay);
    } catch (error) {
      if (relay?.pid !== undefined) killGroup(relay.pid);
      await proxy.close();
      throw error;
    }
    const pid = relay.pid as number;
    return {
      async close() {
        killGroup(pid);
        await proxy.close();
      },
    };
  }
}

// The relay and the children relaying connections: one process group.
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

function listening(relay: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = "";
    let errors = "";
    const timer = setTimeout(() => fail("it did not start listening within 5 s"), 5_000);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`the egress relay could not start: ${errors.trim() || why}`));
    };
    relay.stderr?.setEncoding("utf8").on("data", (text: string) => {
      errors += text;
    });
    relay.stdout?.setEncoding("utf8").on("data", (text: string) => {
      said += text;
      if (said.includes("listening\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    relay.once("error", (error) => fail(error.message));
    relay.once("exit", (code) => fail(`it exited with code ${code}`));
  });
}
