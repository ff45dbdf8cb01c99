import { SandboxError, SandboxLimitError } from "../../core/errors/index.js";
import { Admission, type CapacityOptions, type Holding } from "./admission.js";
import type { SandboxDriver } from "./driver.js";
import type { LiveSandbox, RunnerLimits } from "./live-sandbox.js";
import type { SandboxSizes } from "./sandbox-spec.js";

/**
 * What a sandbox must pass before it starts, and what it holds meanwhile: the runner's and its
 * project's caps on sandboxes, the claim on its kept workspace (one sandbox at a time), and its
 * share of the capacity (admission.ts), admitted one creation at a time. The same for every
 * driver: the driver only tells the free disk and whether workspaces are held to their size.
 */
export class RunnerAdmission {
  /** Sandboxes being started, by id: a DELETE meanwhile waits for the start, then stops it. */
  readonly creating = new Map<string, { projectId: string; done: Promise<unknown> }>();
  /** Kept workspaces in use, by their key: the sandbox (live or starting) holding each. */
  private readonly keptWorkspaces = new Map<string, string>();
  private readonly capacity: Admission;
  /** Admissions take turns, so that two creations cannot both take the last of a resource. */
  private admissions: Promise<unknown> = Promise.resolve();
  /** What sandboxes admitted but not yet running hold, by id. */
  private readonly reserved = new Map<string, Holding>();

  constructor(
    private readonly options: {
      readonly limits: RunnerLimits;
      readonly capacity: CapacityOptions;
      readonly driver: SandboxDriver;
      /** The runner's running (and stopping) sandboxes. */
      readonly live: ReadonlyMap<string, LiveSandbox>;
    },
  ) {
    this.capacity = new Admission(options.capacity, () => options.driver.freeDiskBytes());
  }

  /** Refuses a new sandbox over the runner's or the project's cap. */
  checkCaps(projectId: string): void {
    const holders = [
      ...[...this.options.live.values()].map((sandbox) => sandbox.projectId),
      ...[...this.creating.values()].map((creation) => creation.projectId),
    ];
    const { sandboxes, sandboxesPerProject } = this.options.limits;
    if (holders.length >= sandboxes) {
      throw new SandboxLimitError(
        `this runner already runs ${holders.length} sandboxes, the most it may (sandboxes.limits.sandboxes = ${sandboxes}); stop one, or retry when one ends`,
      );
    }
    const own = holders.filter((holder) => holder === projectId).length;
    if (own >= sandboxesPerProject) {
      throw new SandboxLimitError(
        `this project already runs ${own} sandboxes, the most one project may (sandboxes.limits.sandboxesPerProject = ${sandboxesPerProject}); stop one with DELETE /api/sandboxes/{id}, or retry when one ends`,
      );
    }
  }

  /** Holds a kept workspace for sandbox `id`; refuses one that another sandbox holds. */
  claimWorkspace(id: string, keepAt: string | undefined): void {
    if (keepAt === undefined) return;
    const holder = this.keptWorkspaces.get(keepAt);
    if (holder !== undefined) {
      throw new SandboxError(
        "conflict",
        `the workspace kept at ${keepAt} is in use by sandbox ${holder}; stop that sandbox before starting another on it`,
      );
    }
    this.keptWorkspaces.set(keepAt, id);
  }

  unclaimWorkspace(id: string): void {
    for (const [keepAt, holder] of this.keptWorkspaces) {
      if (holder === id) this.keptWorkspaces.delete(keepAt);
    }
  }

  /** Reserves what the sandbox asks for, or throws SandboxCapacityError (admission.ts). */
  admit(id: string, sizes: SandboxSizes & { readonly diskMB: number }): Promise<void> {
    const turn = this.admissions.then(async () => {
      const holding = {
        memoryMB: sizes.memoryMB,
        cpuCount: sizes.cpuCount,
        diskMB: sizes.diskMB,
      };
      const diskHeld = !this.options.driver.unenforcedLimits.includes("disk");
      await this.capacity.admit(holding, await this.holdings(), diskHeld);
      this.reserved.set(id, holding);
    });
    this.admissions = turn.catch(() => undefined);
    return turn;
  }

  /** Forgets what a creation reserved: its sandbox runs (and holds it as such) or failed. */
  settled(id: string): void {
    this.reserved.delete(id);
  }

  /** Throws SandboxCapacityError unless growing a running sandbox to `next` fits. */
  async admitResize(sandbox: LiveSandbox, next: SandboxSizes): Promise<void> {
    this.capacity.admitResize(
      {
        memoryMB: next.memoryMB - sandbox.record.memoryMB,
        cpuCount: next.cpuCount - sandbox.record.cpuCount,
      },
      await this.holdings(),
    );
  }

  /** What every running (or stopping, or admitted) sandbox holds. */
  private async holdings(): Promise<Holding[]> {
    const { driver, live } = this.options;
    const running = await Promise.all(
      [...live.values()].map(async (sandbox) => ({
        memoryMB: sandbox.record.memoryMB,
        cpuCount: sandbox.record.cpuCount,
        diskMB: sandbox.record.diskMB,
        diskUsedBytes: await driver.diskUsage(sandbox.record.id).catch(() => undefined),
      })),
    );
    return [...running, ...this.reserved.values()];
  }
}
