import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../../core/logger.js";
import type { SandboxDriver, SandboxUsage, StartedSandbox, UnenforcedLimit } from "../driver.js";
import type { EgressAttachment, SandboxEgress } from "../egress/sandbox-egress.js";
import type { PrerequisiteReport } from "../prerequisites.js";
import { ProcessStartError } from "../process-start-error.js";
import type { ExecProcess, ProcessCommand, SandboxProcess } from "../sandbox-process.js";
import type { KeptWorkspace, SandboxMount, SandboxSizes, SandboxSpec } from "../sandbox-spec.js";
import type { RunnerTemplate } from "../templates.js";
import { enterSandbox } from "./enter.js";
import { keptWorkspacePath } from "./kept-workspace.js";
import { checkMounts } from "./mounts.js";
import { execProcess, notStarted, sandboxProcess } from "./processes.js";
import { recoverRunner } from "./recovery.js";
import { type Booted, type RunnerHost, SandboxLauncher } from "./sandbox-launcher.js";

export interface BubblewrapDriverSettings {
  /**
   * Where workspaces and the sandboxes' /etc live: a folder every sandbox's unprivileged uid
   * can reach (mode 0711 on the way), which a service's data folder may not be.
   */
  readonly runtimeDir: string;
  readonly host: RunnerHost;
  readonly templates: ReadonlyMap<string, RunnerTemplate>;
  /** Most processes and threads per sandbox. Default 1024. */
  readonly pidsLimit?: number | undefined;
  /** Workspaces of the default disk size kept ready. Default 4. */
  readonly workspacePool?: number | undefined;
  readonly defaultDiskMB: number;
  /** Sandboxes of the base template and default size started ahead. Default 2. */
  readonly warmSandboxes?: number | undefined;
  /** Each sandbox's egress proxy and relay; none: sandboxes have loopback only. */
  readonly egress?: SandboxEgress | undefined;
}

/**
 * The host a bubblewrap driver runs on, from the prerequisites' report (prerequisites.ts);
 * undefined without bwrap, the exec and launch helpers or a seccomp filter.
 */
export function runnerHostOf(report: PrerequisiteReport): RunnerHost | undefined {
  const { bubblewrap, enterHelper, launchHelper, seccompFilter } = report;
  if (
    bubblewrap === undefined ||
    enterHelper === undefined ||
    launchHelper === undefined ||
    seccompFilter === undefined
  ) {
    return undefined;
  }
  return {
    bwrap: {
      path: bubblewrap.path,
      disableUserns: bubblewrap.disableUserns,
      tmpfsSize: bubblewrap.tmpfsSize,
    },
    cgroups: report.cgroups,
    diskLimits: report.diskLimits,
    root: process.getuid?.() === 0,
    enterHelper,
    launchHelper,
    seccompFilter,
  };
}

/** A sandbox this driver started, until it is stopped. */
interface Held {
  readonly booted: Booted;
  readonly egress: EgressAttachment | undefined;
}

/**
 * Sandboxes on this host: each a bubblewrap process tree in fresh namespaces, as an
 * unprivileged host uid of its own, with its seccomp filter, in a cgroup that holds its memory,
 * CPU and process count, with a workspace held to its disk size (a loop-mounted image) and an
 * egress relay to its proxy. Execs and file tools enter it through the exec helper (enter.ts).
 */
export class BubblewrapDriver implements SandboxDriver {
  private readonly held = new Map<string, Held>();
  private launcher: SandboxLauncher | undefined;
  /** Called when the last sandbox it started has stopped. */
  private whenNoneHeld: (() => void) | undefined;

  constructor(private readonly settings: BubblewrapDriverSettings) {}

  get unenforcedLimits(): UnenforcedLimit[] {
    const missing: UnenforcedLimit[] = [];
    if (this.settings.host.cgroups === undefined) missing.push("memory", "cpu", "pids");
    if (!this.settings.host.diskLimits) missing.push("disk");
    return missing;
  }

  /**
   * Removes what an earlier run left (cgroups, mounts, loop devices, images; see recovery.ts),
   * then makes the runtime folder, with this process's pid in it.
   */
  async open(): Promise<void> {
    const folder = this.settings.runtimeDir;
    await recoverRunner({ runtimeDir: folder, cgroups: this.settings.host.cgroups });
    mkdirSync(folder, { recursive: true, mode: 0o711 });
    chmodSync(folder, 0o711);
    // Which process runs here: a runner killed with -9 leaves its folder (and its mounts), and
    // the next runner to start removes what belongs to a process that is gone.
    writeFileSync(join(folder, "runner.pid"), `${process.pid}\n`);
  }

  start(options: { readonly warm: boolean }): Promise<void> {
    const settings = this.settings;
    this.launcher = new SandboxLauncher({
      runtimeDir: settings.runtimeDir,
      host: settings.host,
      templates: settings.templates,
      pidsLimit: this.pidsLimit,
      defaultDiskMB: settings.defaultDiskMB,
      workspacePool: settings.workspacePool ?? 4,
      warmSandboxes: options.warm ? (settings.warmSandboxes ?? 2) : 0,
      etcFiles: settings.egress?.etcFiles,
    });
    return this.launcher.start();
  }

  async freeDiskBytes(): Promise<number> {
    const stats = await statfs(this.settings.runtimeDir);
    return stats.bavail * stats.bsize;
  }

  checkMounts(mounts: readonly SandboxMount[]): Promise<SandboxMount[]> {
    return checkMounts(mounts, this.settings.host.root);
  }

  keptWorkspaceKey(workspace: KeptWorkspace): string {
    return keptWorkspacePath(workspace, this.settings.runtimeDir);
  }

  async create(spec: SandboxSpec): Promise<StartedSandbox> {
    const launcher = this.started();
    const booted = await launcher.take(spec.template, spec, spec.id, {
      mounts: spec.mounts,
      keepAt: spec.keptWorkspace,
    });
    let egress: EgressAttachment | undefined;
    try {
      egress = await this.settings.egress?.attach(
        spec.id,
        booted.entry,
        booted.cgroup?.procsFiles ?? [],
      );
    } catch (error) {
      await launcher.release(booted);
      throw error;
    }
    this.held.set(spec.id, { booted, egress });
    const { launched } = booted;
    return {
      egress,
      ended: launched.exited.then(({ code, signal }) => ({
        how: signal ?? `code ${code}`,
        detail: launched.errors(),
      })),
    };
  }

  async exec(
    sandboxId: string,
    command: ProcessCommand,
    options: { readonly signal?: AbortSignal | undefined } = {},
  ): Promise<ExecProcess> {
    options.signal?.throwIfAborted();
    const { booted } = this.holding(sandboxId);
    this.started().noteActivity();
    const standby = booted.standby.take();
    const cgroup =
      standby?.cgroup ?? (await booted.cgroup?.child(`ex${randomBytes(6).toString("hex")}`));
    try {
      options.signal?.throwIfAborted();
      const entered =
        standby?.entry.usable === true
          ? standby.entry.run(command)
          : enterSandbox(booted.entry, { ...command, cgroupProcs: cgroup?.procsFiles ?? [] });
      return execProcess(entered, cgroup);
    } catch (error) {
      await cgroup?.destroy().catch(() => undefined);
      throw error;
    }
  }

  fileTool(sandboxId: string, command: ProcessCommand): SandboxProcess {
    const held = this.held.get(sandboxId);
    if (held === undefined) return notStarted(gone(sandboxId));
    const { booted } = held;
    return sandboxProcess(
      enterSandbox(booted.entry, { ...command, cgroupProcs: booted.cgroup?.procsFiles ?? [] }),
    );
  }

  async resize(sandboxId: string, sizes: SandboxSizes): Promise<void> {
    const { booted } = this.holding(sandboxId);
    await booted.cgroup?.setLimits({
      cpuCount: sizes.cpuCount,
      memoryMB: sizes.memoryMB,
      pids: this.pidsLimit,
    });
  }

  async usage(sandboxId: string): Promise<SandboxUsage | undefined> {
    return this.held.get(sandboxId)?.booted.cgroup?.usage();
  }

  async diskUsage(sandboxId: string): Promise<number | undefined> {
    return (await this.held.get(sandboxId)?.booted.workspace.usage())?.usedBytes;
  }

  workspaceHostPath(sandboxId: string): string | undefined {
    return this.held.get(sandboxId)?.booted.workspace.path;
  }

  async stop(sandboxId: string): Promise<void> {
    const held = this.held.get(sandboxId);
    if (held === undefined) return;
    await this.started().release(held.booted);
    await held.egress?.close().catch(() => undefined);
    this.held.delete(sandboxId);
    if (this.held.size === 0) this.whenNoneHeld?.();
  }

  async close(): Promise<void> {
    await this.launcher?.close();
    if (this.held.size > 0) {
      await new Promise<void>((resolve) => {
        this.whenNoneHeld = resolve;
      });
    }
    // The runner's own cgroup folder and runtime folder go too: nothing of it outlives it.
    await this.settings.host.cgroups?.removeStale().catch((error: unknown) => {
      log.error("could not remove the runner's cgroups", error);
    });
    rmSync(this.settings.runtimeDir, { recursive: true, force: true });
  }

  private get pidsLimit(): number {
    return this.settings.pidsLimit ?? 1024;
  }

  private started(): SandboxLauncher {
    if (this.launcher === undefined) throw new Error("the bubblewrap driver has not started");
    return this.launcher;
  }

  private holding(sandboxId: string): Held {
    const held = this.held.get(sandboxId);
    if (held === undefined) throw gone(sandboxId);
    return held;
  }
}

function gone(sandboxId: string): ProcessStartError {
  return new ProcessStartError(`sandbox ${sandboxId} is not running here`, 0);
}
