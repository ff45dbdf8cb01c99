import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { log } from "../../../core/logger.js";
import type { SandboxMount } from "../sandbox-spec.js";
import type { RunnerTemplate } from "../templates.js";
import type { CgroupDriver, SandboxCgroup } from "./cgroups/types.js";
import type { SandboxEntry } from "./enter.js";
import { ExecStandby } from "./exec-standby.js";
import { type BwrapInfo, type LaunchedSandbox, launchSandbox } from "./launch.js";
import { type Workspace, WorkspaceDisks } from "./workspace-disks.js";

/** What the host offers, found at start (prerequisites.ts). */
export interface RunnerHost {
  readonly bwrap: BwrapInfo;
  /** Undefined when cgroups cannot be used (then memory, cpu and pids are not enforced). */
  readonly cgroups: CgroupDriver | undefined;
  /** Loop-mounted images can hold /workspace to its size. */
  readonly diskLimits: boolean;
  /** The runner runs as root, so each sandbox can have an unprivileged host uid of its own. */
  readonly root: boolean;
  /** The built exec helper (enter-helper.ts), which starts every process in a sandbox. */
  readonly enterHelper: string;
  /** The built launch helper (enter-helper.ts), the parent of every sandbox's bwrap. */
  readonly launchHelper: string;
  /** The seccomp filter of every sandbox process (seccomp/filter.ts). */
  readonly seccompFilter: Uint8Array;
}

/** The processes and resources of a started sandbox, before (or without) its record. */
export interface Booted {
  readonly template: string;
  readonly diskMB: number;
  readonly limits: { readonly memoryMB: number; readonly cpuCount: number };
  readonly hostUid: number | undefined;
  readonly cgroup: SandboxCgroup | undefined;
  readonly workspace: Workspace;
  readonly launched: LaunchedSandbox;
  /** What starts a process inside it (execs, file operations). */
  readonly entry: SandboxEntry;
  /** Its next exec's helper, made ahead. */
  readonly standby: ExecStandby;
}

/** What only some sandboxes have (an agent's): they are never started ahead. */
export interface BootExtras {
  /** Bound read-only, checked (mounts.ts). */
  readonly mounts?: readonly SandboxMount[] | undefined;
  /** The kept workspace's host path, checked (kept-workspace.ts). */
  readonly keepAt?: string | undefined;
}

export interface LauncherSettings {
  /** The runner's runtime folder: the sandboxes' /etc and workspaces live in it. */
  readonly runtimeDir: string;
  readonly host: RunnerHost;
  readonly templates: ReadonlyMap<string, RunnerTemplate>;
  readonly pidsLimit: number;
  readonly defaultDiskMB: number;
  /** Workspaces of the default disk size kept ready. */
  readonly workspacePool: number;
  /** Sandboxes of the base template and default size started ahead (0: none). */
  readonly warmSandboxes: number;
  /** Files of /etc beyond the base ones (the egress CA bundle). */
  readonly etcFiles?: Readonly<Record<string, string>> | undefined;
}

/**
 * Host uids of sandboxes: drawn at random from the range systemd keeps for containers
 * (524288–1879048191), so that none is a real user's, and the one a sandbox can read (the
 * kernel shows a tmpfs owner's host uid in /proc/self/mountinfo) tells it nothing.
 */
const hostUidRange = { first: 0x8_0000, last: 0x6fff_ffff } as const;

/**
 * Starts and frees what a sandbox is made of: an unprivileged host uid of its own, a cgroup
 * with its limits, a workspace of its disk size, and the bwrap process tree. Keeps a few
 * sandboxes of the base template and default size started ahead, so that creating one is
 * handing it over. Knows nothing of records, projects or execs (runner.ts does).
 */
export class SandboxLauncher {
  private readonly usedUids = new Set<number>();
  private readonly disks: WorkspaceDisks;
  private readonly warm: Booted[] = [];
  private warming: Promise<void> | undefined;
  private closed = false;
  /** When a request last needed the runner (performance.now()). */
  private lastActivity = 0;

  constructor(private readonly settings: LauncherSettings) {
    this.disks = new WorkspaceDisks({
      folder: join(settings.runtimeDir, "workspaces"),
      enforce: settings.host.diskLimits,
      poolCount: settings.host.diskLimits ? settings.workspacePool : 0,
      poolSizeMB: settings.defaultDiskMB,
      whenQuiet: () => this.quietMoment(),
    });
  }

  /** Removes what an earlier run left in the workspaces folder, then fills the pools. */
  async start(): Promise<void> {
    await this.disks.start();
    this.refillWarm();
  }

  /**
   * A started sandbox of this template and sizes: a warm one when one fits (its limits set
   * to these, live), else one started now: always when it has mounts or a kept workspace. The
   * failures of each step undo the steps before.
   */
  async take(
    template: RunnerTemplate,
    sizes: { memoryMB: number; cpuCount: number; diskMB: number },
    cgroupName: string,
    extras: BootExtras = {},
  ): Promise<Booted> {
    this.noteActivity();
    const plain = (extras.mounts ?? []).length === 0 && extras.keepAt === undefined;
    const index = plain
      ? this.warm.findIndex(
          (each) => each.template === template.name && each.diskMB === sizes.diskMB,
        )
      : -1;
    if (index === -1) return this.boot(template, sizes, cgroupName, extras);
    const [booted] = this.warm.splice(index, 1) as [Booted];
    this.refillWarm();
    if (booted.limits.memoryMB !== sizes.memoryMB || booted.limits.cpuCount !== sizes.cpuCount) {
      try {
        await booted.cgroup?.setLimits({ ...sizes, pids: this.settings.pidsLimit });
      } catch (error) {
        await this.release(booted);
        throw error;
      }
    }
    return booted;
  }

  /**
   * A request is being served (a creation, an exec): work in the background (formatting disks,
   * starting warm sandboxes, each several process spawns that hold the event loop) waits for a
   * quiet moment, so that it does not slow the requests it is preparing for.
   */
  noteActivity(): void {
    this.lastActivity = performance.now();
  }

  /** Resolves after 100 ms without a request, or 1 s after it was asked, whichever is first. */
  private async quietMoment(): Promise<void> {
    const asked = performance.now();
    for (;;) {
      const now = performance.now();
      const quietFor = now - this.lastActivity;
      if (quietFor >= quietMs || now - asked >= maxQuietWaitMs || this.closed) return;
      await delay(Math.min(quietMs - quietFor, maxQuietWaitMs - (now - asked)));
    }
  }

  /** Kills a sandbox's processes and frees what it held. Errors are logged, never thrown. */
  async release(booted: Booted): Promise<void> {
    const problem = (what: string) => (error: unknown) => {
      log.error(`could not ${what} of a sandbox`, error);
    };
    await booted.standby.close();
    await booted.cgroup?.killAll().catch(problem("kill the processes"));
    // Without a cgroup: bwrap's death takes its namespace's processes with it (pid 1 dies).
    killGroup(booted.launched.process.pid);
    await Promise.race([booted.launched.exited, delay(2_000)]);
    await booted.cgroup?.destroy().catch(problem("remove the cgroup"));
    await booted.workspace.release().catch(problem("remove the workspace"));
    if (booted.hostUid !== undefined) this.usedUids.delete(booted.hostUid);
  }

  /** Frees the warm sandboxes and the workspaces kept ready. */
  async close(): Promise<void> {
    this.closed = true;
    await this.warming;
    await Promise.all(this.warm.splice(0).map((booted) => this.release(booted)));
    await this.disks.close();
  }

  private async boot(
    template: RunnerTemplate,
    sizes: { memoryMB: number; cpuCount: number; diskMB: number },
    cgroupName: string,
    extras: BootExtras = {},
  ): Promise<Booted> {
    const hostUid = this.settings.host.root ? this.takeUid() : undefined;
    let cgroup: SandboxCgroup | undefined;
    let workspace: Workspace | undefined;
    try {
      cgroup = await this.settings.host.cgroups?.create(cgroupName);
      const limits = { memoryMB: sizes.memoryMB, cpuCount: sizes.cpuCount };
      await cgroup?.setLimits({ ...limits, pids: this.settings.pidsLimit });
      const owner = hostUid ?? process.getuid?.() ?? 0;
      workspace = await this.disks.acquire(sizes.diskMB, { uid: owner, gid: owner }, extras.keepAt);
      const launched = await launchSandbox({
        bwrap: this.settings.host.bwrap,
        launcher: this.settings.host.launchHelper,
        template,
        workspace: workspace.path,
        hostUid,
        cgroupProcs: cgroup?.procsFiles ?? [],
        // Half the memory at most: /tmp's pages count against it, and a full /tmp must leave
        // the sandbox room to run (ENOSPC, not the OOM killer taking every process).
        tmpSizeMB: Math.min(Math.floor(sizes.memoryMB / 2), 1024),
        filter: this.settings.host.seccompFilter,
        etcFiles: this.settings.etcFiles,
        mounts: extras.mounts,
      });
      // Formatting the next workspaces would compete with this start for the CPU: after it.
      this.disks.refill();
      const entry: SandboxEntry = {
        helper: this.settings.host.enterHelper,
        innerPid: launched.innerPid,
        usernsInode: launched.usernsInode,
        filter: this.settings.host.seccompFilter,
      };
      const standby = new ExecStandby({
        sandboxCgroup: cgroup,
        entry,
        whenQuiet: () => this.quietMoment(),
      });
      standby.refill();
      return {
        template: template.name,
        diskMB: sizes.diskMB,
        limits,
        hostUid,
        cgroup,
        workspace,
        launched,
        entry,
        standby,
      };
    } catch (error) {
      await cgroup?.destroy().catch(() => undefined);
      await workspace?.release().catch(() => undefined);
      if (hostUid !== undefined) this.usedUids.delete(hostUid);
      throw error;
    }
  }

  /** Starts warm sandboxes until there are `warmSandboxes`, in the background. */
  private refillWarm(): void {
    const wanted = this.settings.warmSandboxes;
    if (this.warming !== undefined || this.closed || wanted === 0) return;
    const template = this.settings.templates.get("base");
    if (template === undefined) return;
    this.warming = (async () => {
      while (!this.closed && this.warm.length < wanted) {
        await this.quietMoment();
        const sizes = { memoryMB: 1024, cpuCount: 1, diskMB: this.settings.defaultDiskMB };
        const booted = await this.boot(
          template,
          sizes,
          `warm${randomBytes(6).toString("hex")}`,
        ).catch((error: unknown) => {
          log.error("could not start a warm sandbox", error);
          return undefined;
        });
        if (booted === undefined) return;
        if (this.closed) {
          await this.release(booted);
          return;
        }
        this.warm.push(booted);
        // A warm sandbox that dies on its own is dropped, not handed out.
        void booted.launched.exited.then(() => {
          const index = this.warm.indexOf(booted);
          if (index === -1) return;
          this.warm.splice(index, 1);
          void this.release(booted);
        });
      }
    })().finally(() => {
      this.warming = undefined;
    });
  }

  private takeUid(): number {
    for (;;) {
      const span = hostUidRange.last - hostUidRange.first + 1;
      const uid = hostUidRange.first + (randomBytes(4).readUInt32BE() % span);
      if (!this.usedUids.has(uid)) {
        this.usedUids.add(uid);
        return uid;
      }
    }
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

const quietMs = 100;
const maxQuietWaitMs = 1_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
