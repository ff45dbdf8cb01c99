import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { rootCertificates } from "node:tls";
import { ConfigurationError } from "../../core/errors/index.js";
import { log } from "../../core/logger.js";
import type { ExportBatch } from "../../core/wire/index.js";
import type { SandboxRecord } from "../../core/wire/sandbox.js";
import { diskRangeMB as defaultDiskRange } from "../../core/wire/sandbox-sizes.js";
import type { CapacityOptions } from "../../sandbox/runner/admission.js";
import {
  BubblewrapDriver,
  runnerHostOf,
} from "../../sandbox/runner/bubblewrap/bubblewrap-driver.js";
import type { EgressHosts } from "../../sandbox/runner/egress/addresses.js";
import { CertificateAuthority } from "../../sandbox/runner/egress/certificate-authority.js";
import { parseHostPattern } from "../../sandbox/runner/egress/host-pattern.js";
import type { EgressRecord } from "../../sandbox/runner/egress/proxy.js";
import { egressEnvironment, SandboxEgress } from "../../sandbox/runner/egress/sandbox-egress.js";
import { relayHelper } from "../../sandbox/runner/enter-helper.js";
import type { RunnerLimits } from "../../sandbox/runner/live-sandbox.js";
import { checkPrerequisites } from "../../sandbox/runner/prerequisites.js";
import {
  type RunnerSettings,
  type SandboxRecords,
  SandboxRunner,
} from "../../sandbox/runner/runner.js";
import { loadTemplates, type RunnerTemplate } from "../../sandbox/runner/templates.js";
import { defaultSandboxPrices, type SandboxPrices } from "../../sandbox/runner/usage.js";
import { reportingChanges } from "../events/sandbox-changes.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";
import { SandboxStore } from "../store/sandboxes.js";
import type { SecretStores } from "../store/secret-vault.js";
import { egressSpanBatch } from "./egress-spans.js";
import { ExecTokens } from "./exec-tokens.js";
import { SandboxMirror } from "./sandbox-mirror.js";

/** The sandbox API: a runner, or the reason there is none (answered with 503). */
export type SandboxService =
  | {
      readonly runner: SandboxRunner;
      readonly store: SandboxStore;
      readonly templates: ReadonlyMap<string, RunnerTemplate>;
      readonly diskRangeMB: {
        readonly min: number;
        readonly max: number;
        readonly default: number;
      };
      readonly prices: SandboxPrices;
      readonly tokens: ExecTokens;
      /** The stores a sandbox may name at create; undefined in a service without them. */
      readonly secretStores: SecretStores | undefined;
      /**
       * On a shared PostgreSQL store: every instance's sandboxes (the list, records of other
       * instances, usage), and the copy of this instance's into it. Undefined on SQLite.
       */
      readonly shared:
        | { readonly directory: SandboxDirectory; readonly mirror: SandboxMirror }
        | undefined;
    }
  | {
      readonly unavailable: string;
      /**
       * On a shared PostgreSQL store: the other instances' sandboxes, which this one lists,
       * reads and sums the usage of though it runs none.
       */
      readonly shared?: { readonly directory: SandboxDirectory; readonly prices: SandboxPrices };
    };

/** The sandbox runner's settings in `createServer({ sandboxes })`. */
export interface SandboxOptions {
  /** Run sandboxes at all. Default true. */
  readonly enabled?: boolean;
  /** Templates besides `base`, in the node-network template schema. */
  readonly templates?: readonly unknown[];
  /** The disk sizes a sandbox may ask for, in MB. Default 20480–262144, 20480. */
  readonly diskRangeMB?: { readonly min: number; readonly max: number; readonly default: number };
  /** Most processes and threads per sandbox. Default 1024. */
  readonly pidsLimit?: number;
  /** Run sandboxes even where a limit cannot be enforced, saying so in each one's status. */
  readonly allowUnenforcedLimits?: boolean;
  /** Workspaces of the default size kept ready. Default 4. */
  readonly workspacePool?: number;
  /** Output kept per exec for re-attach, in bytes. Default 4 MiB. */
  readonly outputBufferBytes?: number;
  /**
   * Caps: sandboxes per project (100) and per runner (200), execs per sandbox (64), sockets
   * per exec (8), and the memory of every exec's output together (256 MiB). Over a cap, the
   * API answers 429 naming it.
   */
  readonly limits?: Partial<Omit<RunnerLimits, "outputBufferBytes">>;
  /**
   * What the runner may promise all its sandboxes: memory (default the host's RAM), CPUs (the
   * host's) and disk (the free space where workspaces live), and how far each may be
   * overcommitted (memory 1, CPU 16, disk 1). A sandbox that does not fit is refused with 503.
   */
  readonly capacity?: CapacityOptions;
  readonly prices?: Partial<SandboxPrices>;
  /** A name for this runner's cgroups and runtime folder. Default: from the data directory. */
  readonly runnerName?: string;
}

/** `createServer({ egress })`: how sandboxes reach the network through their proxies. */
export interface EgressOptions {
  /**
   * Names that resolve to exactly this address, as curl's --resolve: `{ "api.internal":
   * "127.0.0.1:8443" }`, allowed although loopback or private (a model server on this host, a
   * test's upstream). The name must still be on a sandbox's allowlist.
   */
  readonly hosts?: Readonly<Record<string, string>>;
  /**
   * PEM files of CAs to trust, besides the system's, for upstream TLS the proxy originates
   * (a local model server with its own certificate).
   */
  readonly caFiles?: readonly string[];
}

/**
 * The egress of every sandbox: a proxy per sandbox behind a relay in its network namespace,
 * enforcing its secret store. Without the relay (no compiler) sandboxes keep loopback only.
 */
async function startEgress(
  runtimeDir: string,
  secretStores: SecretStores | undefined,
  options: EgressOptions,
  onRecord: (record: EgressRecord) => void,
): Promise<SandboxEgress | undefined> {
  const relay = await relayHelper();
  if (!relay.ok) {
    log.warn(`sandboxes have no egress: ${relay.problem} (fix: ${relay.fix})`);
    return undefined;
  }
  const hosts = parseEgressHosts(options.hosts ?? {});
  const extraCa = (options.caFiles ?? []).map((file) => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      throw new ConfigurationError(
        `egress CA file ${file} cannot be read: ${(error as Error).message}`,
      );
    }
  });
  return new SandboxEgress({
    relay: relay.path,
    runtimeDir,
    policyFor: async (sandboxId) => secretStores?.policyFor(sandboxId),
    hosts,
    authority: CertificateAuthority.create(),
    onRecord,
    ...(extraCa.length === 0 ? {} : { upstreamCa: [...rootCertificates, ...extraCa] }),
  });
}

/** `name=address:port` pairs as the proxy looks them up; a bad one is a ConfigurationError. */
export function parseEgressHosts(hosts: Readonly<Record<string, string>>): EgressHosts {
  const parsed = new Map<string, { address: string; port: number }>();
  for (const [name, target] of Object.entries(hosts)) {
    const pattern = parseHostPattern(name);
    const match = /^(\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d{1,5})$/.exec(target);
    const address = match?.[1]?.replace(/^\[|\]$/g, "");
    const port = Number(match?.[2]);
    if (
      typeof pattern === "string" ||
      pattern.wildcard ||
      pattern.port !== undefined ||
      address === undefined ||
      isIP(address) === 0 ||
      port < 1 ||
      port > 65_535
    ) {
      throw new ConfigurationError(
        `egress host ${JSON.stringify(`${name}=${target}`)} must be name=address:port, such as api.internal=127.0.0.1:8443`,
      );
    }
    parsed.set(pattern.host, { address, port });
  }
  return parsed;
}

/** The name of a data directory's runner: its cgroups and its runtime folder carry it. */
export function runnerNameFor(dataDir: string): string {
  return `cairn-${createHash("sha256").update(dataDir).digest("hex").slice(0, 10)}`;
}

/**
 * The sandbox half of the service: the runner when this host has what it needs, else the
 * reason, which every sandbox call answers with 503 (the observability API serves on).
 */
export async function startSandboxService(
  db: DatabaseSync,
  dataDir: string,
  options: SandboxOptions = {},
  secretStores?: SecretStores,
  egressOptions: EgressOptions = {},
  spanSink?: (projectId: string, batch: ExportBatch) => Promise<unknown>,
  onSandboxChanged?: (projectId: string, record: SandboxRecord) => void,
  directory?: SandboxDirectory,
): Promise<SandboxService> {
  const prices = { ...defaultSandboxPrices, ...options.prices };
  const unavailable = (reason: string): SandboxService => ({
    unavailable: reason,
    ...(directory === undefined ? {} : { shared: { directory, prices } }),
  });
  if (options.enabled === false) {
    return unavailable(
      "sandboxes are turned off in this service instance (--no-sandboxes, createServer({ sandboxes: { enabled: false } })); send sandbox requests to an instance that runs them",
    );
  }
  // One runner per data folder: a restart finds (and removes) what the last run left.
  const runnerName = options.runnerName ?? runnerNameFor(dataDir);
  const report = await checkPrerequisites({ runnerName });
  const missing = report.checks.filter((check) => check.required && !check.ok);
  const essential = missing.filter((check) => !/cgroup|disk/i.test(check.name));
  const host = runnerHostOf(report);
  if (host === undefined || essential.length > 0) {
    return unavailable(
      `sandboxes cannot run on this host: ${essential
        .map(
          (check) =>
            `${check.detail}${check.fix === undefined ? "" : ` (fix: ${check.fix.replace(/\n/g, "; ")})`}`,
        )
        .join("; ")}. Run \`cairn doctor\` for details.`,
    );
  }
  const diskRangeMB = options.diskRangeMB ?? defaultDiskRange;
  const templates = loadTemplates(options.templates);
  const store = new SandboxStore(db);
  const mirror = directory === undefined ? undefined : new SandboxMirror(store, directory);
  let runner: SandboxRunner | undefined;
  const egress = await startEgress(
    join(tmpdir(), runnerName),
    secretStores,
    egressOptions,
    (record) => {
      const bytes = record.bytesIn + record.bytesOut;
      if (bytes > 0) {
        store.addEgressBytes(record.sandboxId, bytes);
        mirror?.changed(record.sandboxId);
      }
      // A span under the exec that made the request, when it came with a trace.
      const traced = runner?.tracedExec(record.sandboxId);
      if (traced !== undefined && spanSink !== undefined) {
        spanSink(traced.projectId, egressSpanBatch(record, traced.traceparent)).catch(
          (error: unknown) => log.error("could not record an egress request's span", error),
        );
      }
    },
  );
  const driver = new BubblewrapDriver({
    runtimeDir: join(tmpdir(), runnerName),
    host,
    templates,
    defaultDiskMB: diskRangeMB.default,
    pidsLimit: options.pidsLimit,
    workspacePool: options.workspacePool,
    egress,
  });
  const settings: RunnerSettings = {
    driver,
    records: reporting(mirror?.records(store) ?? store, onSandboxChanged),
    templates,
    ...(options.allowUnenforcedLimits === undefined
      ? {}
      : { allowUnenforcedLimits: options.allowUnenforcedLimits }),
    ...(options.capacity === undefined ? {} : { capacity: options.capacity }),
    limits: {
      ...options.limits,
      ...(options.outputBufferBytes === undefined
        ? {}
        : { outputBufferBytes: options.outputBufferBytes }),
    },
    // Each part adds its variables: the proxy's, and the secrets' placeholders (never a value).
    environmentFor: async (sandboxId) => ({
      ...(egress === undefined ? {} : egressEnvironment()),
      ...(await secretStores?.placeholders(sandboxId)),
    }),
  };
  try {
    runner = await SandboxRunner.start(settings);
  } catch (error) {
    // Sandboxes over the debris of an earlier run could collide with it: none until it is gone.
    const message = (error as Error).message;
    log.error(`sandboxes are off: ${message}`);
    return unavailable(`${message}. Remove it by hand (or reboot), then restart the service.`);
  }
  return {
    runner,
    store,
    templates,
    diskRangeMB,
    prices,
    tokens: new ExecTokens(),
    secretStores,
    shared: directory === undefined || mirror === undefined ? undefined : { directory, mirror },
  };
}

function reporting(
  records: SandboxRecords,
  changed: ((projectId: string, record: SandboxRecord) => void) | undefined,
): SandboxRecords {
  return changed === undefined ? records : reportingChanges(records, changed);
}
