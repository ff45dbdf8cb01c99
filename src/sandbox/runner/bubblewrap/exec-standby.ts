import { randomBytes } from "node:crypto";
import { log } from "../../../core/logger.js";
import type { SandboxCgroup } from "./cgroups/types.js";
import { prepareEntry, type ReadyEntry, type SandboxEntry } from "./enter.js";

/** An exec helper made ahead, in the cgroup of the exec it will run. */
export interface StandbyExec {
  readonly cgroup: SandboxCgroup | undefined;
  readonly entry: ReadyEntry;
}

/**
 * One exec helper per sandbox, started ahead in a fresh exec cgroup and waiting inside the
 * sandbox's namespaces: an exec takes it and only says what to run. Starting a process from the
 * service costs milliseconds of its event loop, and moving one into a cgroup v1 waits for an
 * RCU grace period (10-15 ms here); made ahead, neither is on the exec's path.
 */
export class ExecStandby {
  private ready: StandbyExec | undefined;
  private making: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly options: {
      readonly sandboxCgroup: SandboxCgroup | undefined;
      readonly entry: SandboxEntry;
      /** Resolves when starting one will not slow a request down. */
      readonly whenQuiet: () => Promise<void>;
    },
  ) {}

  /** The helper made ahead, if there is a usable one; the next is made at a quiet moment. */
  take(): StandbyExec | undefined {
    const ready = this.ready;
    this.ready = undefined;
    this.refill();
    if (ready === undefined || ready.entry.usable) return ready;
    void ready.cgroup?.destroy().catch(() => undefined);
    return undefined;
  }

  /** Makes the next helper, in the background, when there is none. */
  refill(): void {
    if (this.making !== undefined || this.ready !== undefined || this.closed) return;
    this.making = (async () => {
      await this.options.whenQuiet();
      if (this.closed) return;
      const cgroup = await this.options.sandboxCgroup?.child(`ex${randomBytes(6).toString("hex")}`);
      if (this.closed) {
        await cgroup?.destroy().catch(() => undefined);
        return;
      }
      this.ready = { cgroup, entry: prepareEntry(this.options.entry, cgroup?.procsFiles ?? []) };
    })()
      .catch((error: unknown) => log.warn("could not make an exec helper ahead", error))
      .finally(() => {
        this.making = undefined;
      });
  }

  /** Lets the waiting helper go (its cgroup goes with the sandbox's). */
  async close(): Promise<void> {
    this.closed = true;
    await this.making;
    this.ready?.entry.discard();
    this.ready = undefined;
  }
}
