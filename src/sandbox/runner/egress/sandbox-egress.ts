import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxEntry } from "../bubblewrap/enter.js";
import type { EgressHosts } from "./addresses.js";
import type { CertificateAuthority } from "./certificate-authority.js";
import type { EgressPolicySource } from "./policy.js";
import { EgressProxy, type EgressRecord } from "./proxy.js";

/** The port of the proxy inside every sandbox, on 127.0.0.1. */
export const egressPort = 3128;

/** Where a sandbox finds the certificates it trusts: the system's and the runner's CA. */
export const caBundlePath = "/etc/cairn/ca-bundle.pem";

// Debian's, Fedora's and Alpine's bundles of the system's trusted certificates.
const systemBundles = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

/**
 * What every process of a sandbox gets so that HTTP clients use its proxy: curl, wget, Python's
 * requests and urllib, Go, and Node (NODE_USE_ENV_PROXY, Node 24) read these.
 */
export function egressEnvironment(): Record<string, string> {
  const proxy = `http://127.0.0.1:${egressPort}`;
  return {
    SSL_CERT_FILE: caBundlePath,
    NODE_EXTRA_CA_CERTS: caBundlePath,
    REQUESTS_CA_BUNDLE: caBundlePath,
    CURL_CA_BUNDLE: caBundlePath,
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
  /** Extra hosts for a while, on top of the policy (EgressProxy.allow); gone at close too. */
  allow(hostPatterns: readonly string[]): () => void;
}

export interface SandboxEgressOptions {
  /** The built relay (native/cairn-relay.c). */
  readonly relay: string;
  /** Where the proxies' sockets go (the runner's runtime folder). */
  readonly runtimeDir: string;
  readonly policyFor: EgressPolicySource;
  readonly hosts: EgressHosts;
  readonly onRecord?: (record: EgressRecord) => void;
  /** The runner's CA: TLS to hosts a secret may go to is intercepted with it. */
  readonly authority: CertificateAuthority;
  /** The certificates upstream TLS is verified against; default Node's root store. */
  readonly upstreamCa?: readonly string[];
}

/**
 * Gives each sandbox its egress: a proxy on a Unix socket of its own, and the relay that listens
 * on 127.0.0.1:3128 in the sandbox's network namespace and passes connections to it.
 */
export class SandboxEgress {
  /** /etc files every sandbox gets: the bundle of the system's certificates and the CA's. */
  readonly etcFiles: Readonly<Record<string, string>>;

  constructor(private readonly options: SandboxEgressOptions) {
    const system = systemBundles.find((path) => existsSync(path));
    const bundle = system === undefined ? "" : readFileSync(system, "utf8");
    this.etcFiles = {
      [caBundlePath.slice("/etc/".length)]:
        `${bundle.trimEnd()}\n${options.authority.certificatePem.trim()}\n`,
    };
  }

  /**
   * Starts the sandbox's proxy and its relay; the relay (and every process it forks for a
   * connection) joins `cgroupProcs`, the sandbox's cgroup, so its memory and processes count
   * against the sandbox's limits, not the host's.
   */
  async attach(
    sandboxId: string,
    entry: SandboxEntry,
    cgroupProcs: readonly string[] = [],
  ): Promise<EgressAttachment> {
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
      authority: this.options.authority,
      ...(this.options.upstreamCa === undefined ? {} : { upstreamCa: this.options.upstreamCa }),
      ...(this.options.onRecord === undefined ? {} : { onRecord: this.options.onRecord }),
    });
    let relay: ChildProcess | undefined;
    try {
      relay = spawn(
        this.options.relay,
        [String(entry.innerPid), String(entry.usernsInode), String(egressPort), socketPath],
        { stdio: ["ignore", "pipe", "pipe"], env: {} },
      );
      // It forks for connections only once listening: it is in the cgroup before any fork.
      for (const procs of cgroupProcs) await appendFile(procs, String(relay.pid));
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
      allow: (hostPatterns) => proxy.allow(hostPatterns),
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
