import { availableParallelism, totalmem } from "node:os";
import { SandboxCapacityError } from "../../core/errors/index.js";

/** What the runner may promise its sandboxes, all together. */
export interface CapacityOptions {
  /** Memory, in MB. Default: the host's RAM. */
  readonly memoryMB?: number;
  /** CPUs. Default: the host's CPUs. */
  readonly cpuCount?: number;
  /** Disk for workspaces, in MB. Default: the free space where the workspaces live, now. */
  readonly diskMB?: number;
  /**
   * How many times the capacity may be promised: sandboxes seldom use all they may. Default:
   * memory 1 (the host cannot run out of memory through sandboxes), CPU 16 (a quota, not a
   * reservation: busy sandboxes share the CPUs), disk 1 (a workspace can never take more of
   * the host's disk than it was given).
   */
  readonly overcommit?: { readonly memory?: number; readonly cpu?: number; readonly disk?: number };
}

/** What one sandbox holds, as admission counts it. */
export interface Holding {
  readonly memoryMB: number;
  readonly cpuCount: number;
  readonly diskMB: number;
  /** Bytes its workspace uses now (undefined before it has one, or where disks are not held). */
  readonly diskUsedBytes?: number | undefined;
}

const megabyte = 1024 * 1024;

/**
 * Admits a sandbox only when what it asks for fits what the runner may still promise: its
 * memory and CPUs against the capacity (times the overcommit) less what running sandboxes
 * hold, and its disk against the space left where the workspaces live, less what running
 * workspaces may still write. Refusals are SandboxCapacityError (503 with Retry-After) naming
 * the resource, what was asked and what is left.
 */
export class Admission {
  private readonly overcommit: { memory: number; cpu: number; disk: number };

  constructor(
    private readonly options: CapacityOptions,
    /** The free space for workspaces, in bytes (SandboxDriver.freeDiskBytes). */
    private readonly freeDiskBytes: () => Promise<number>,
  ) {
    this.overcommit = {
      memory: options.overcommit?.memory ?? 1,
      cpu: options.overcommit?.cpu ?? 16,
      disk: options.overcommit?.disk ?? 1,
    };
  }

  /** The capacity the runner promises from, after the overcommit (disk: at this moment). */
  async capacity(): Promise<{ memoryMB: number; cpuCount: number; diskMB: number }> {
    return {
      memoryMB: this.memoryCapacityMB(),
      cpuCount: this.cpuCapacity(),
      diskMB: Math.floor((await this.diskBytes()) / megabyte) * this.overcommit.disk,
    };
  }

  /**
   * Throws SandboxCapacityError unless `request` fits beside `held` (running sandboxes and
   * those being started). `diskEnforced`: the workspace is an image of its size, so its disk
   * counts; else it is a plain folder that no size holds and admission cannot promise it.
   */
  async admit(request: Holding, held: readonly Holding[], diskEnforced: boolean): Promise<void> {
    this.check(
      "memory",
      request.memoryMB,
      this.memoryCapacityMB(),
      sum(held, (each) => each.memoryMB),
      "MB",
    );
    this.check(
      "cpu",
      request.cpuCount,
      this.cpuCapacity(),
      sum(held, (each) => each.cpuCount),
      "CPUs",
    );
    if (!diskEnforced) return;
    // Disk is promised as what the workspaces may still write: their size less what they use.
    const unwritten = sum(held, (each) =>
      Math.max(0, each.diskMB - Math.floor((each.diskUsedBytes ?? 0) / megabyte)),
    );
    if (this.options.diskMB !== undefined) {
      this.check(
        "disk",
        request.diskMB,
        this.options.diskMB * this.overcommit.disk,
        sum(held, (each) => each.diskMB),
        "MB",
      );
      return;
    }
    const freeMB = Math.floor((await this.diskBytes()) / megabyte);
    this.check("disk", request.diskMB, freeMB * this.overcommit.disk, unwritten, "MB");
  }

  /** Throws SandboxCapacityError unless growing one sandbox's memory or CPUs fits. */
  admitResize(growth: { memoryMB: number; cpuCount: number }, held: readonly Holding[]): void {
    if (growth.memoryMB > 0) {
      this.check(
        "memory",
        growth.memoryMB,
        this.memoryCapacityMB(),
        sum(held, (each) => each.memoryMB),
        "MB more",
      );
    }
    if (growth.cpuCount > 0) {
      this.check(
        "cpu",
        growth.cpuCount,
        this.cpuCapacity(),
        sum(held, (each) => each.cpuCount),
        "CPUs more",
      );
    }
  }

  private memoryCapacityMB(): number {
    return (this.options.memoryMB ?? Math.floor(totalmem() / megabyte)) * this.overcommit.memory;
  }

  private cpuCapacity(): number {
    return (this.options.cpuCount ?? availableParallelism()) * this.overcommit.cpu;
  }

  private async diskBytes(): Promise<number> {
    if (this.options.diskMB !== undefined) return this.options.diskMB * megabyte;
    return this.freeDiskBytes();
  }

  private check(
    resource: "memory" | "cpu" | "disk",
    asked: number,
    capacity: number,
    held: number,
    unit: string,
  ): void {
    if (held + asked <= capacity) return;
    const left = Math.max(0, capacity - held);
    const setting = { memory: "memoryMB", cpu: "cpuCount", disk: "diskMB" }[resource];
    throw new SandboxCapacityError(
      `not enough ${resource} on this host for the sandbox: it asks for ${asked} ${unit}, and the runner has ${formatted(left)} of ${formatted(capacity)} ${unit.replace(" more", "")} left to promise (sandboxes.capacity.${setting}, overcommit ${this.overcommit[resource]}); ask for less, or retry once other sandboxes stop`,
    );
  }
}

function sum(held: readonly Holding[], of: (each: Holding) => number): number {
  return held.reduce((total, each) => total + of(each), 0);
}

function formatted(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
