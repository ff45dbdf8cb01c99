import { log } from "../../core/logger.js";
import type { SandboxRecords } from "../../sandbox/runner/runner.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";
import type { SandboxStore } from "../store/sandboxes.js";

/** How long a copy that failed (the database unreachable) waits before it is tried again. */
const retryMs = 1000;

/**
 * Copies this instance's sandboxes (records and usage, from its SQLite file) to the shared
 * database's directory as they change. Changes only mark a sandbox; copies are made in rounds,
 * each writing the latest state of every sandbox marked since the last, so a burst of changes
 * (egress bytes, CPU checkpoints) costs one write per sandbox. A copy that fails is tried
 * again; the records here stay the truth.
 */
export class SandboxMirror {
  readonly #changed = new Set<string>();
  /** Per sandbox: the highest usage row copied, and the rows that were open then. */
  readonly #copied = new Map<string, { lastId: number; openIds: number[]; record: string }>();
  #round: Promise<void> | undefined;
  #waiting: Array<() => void> = [];
  #warned = false;
  /** This instance's runner id, once it is registered: copies wait for it. */
  #runnerId: (() => string) | undefined;
  #closed = false;

  constructor(
    private readonly store: SandboxStore,
    private readonly directory: SandboxDirectory,
  ) {}

  /** Starts copying, as the runner `runnerId` gives (registered in the directory by then). */
  begin(runnerId: () => string): void {
    this.#runnerId = runnerId;
    if (this.#changed.size > 0) this.#round ??= this.#copyRounds();
  }

  /** Stops trying again what could not be copied (the service is stopping). */
  close(): void {
    this.#closed = true;
  }

  /** The runner's records, marking every sandbox they write. */
  records(records: SandboxRecords): SandboxRecords {
    return {
      insert: (projectId, record) => {
        records.insert(projectId, record);
        this.changed(record.id);
      },
      update: (record) => {
        records.update(record);
        this.changed(record.id);
      },
      get: (projectId, id) => records.get(projectId, id),
      openSegment: (projectId, record, startMs) => {
        records.openSegment(projectId, record, startMs);
        this.changed(record.id);
      },
      closeSegment: (sandboxId, endMs, cpuSeconds) => {
        records.closeSegment(sandboxId, endMs, cpuSeconds);
        this.changed(sandboxId);
      },
      updateOpenSegment: (sandboxId, cpuSeconds) => {
        records.updateOpenSegment(sandboxId, cpuSeconds);
        this.changed(sandboxId);
      },
      markAbandoned: (reason, now) => {
        const abandoned = this.store.liveIds();
        const count = records.markAbandoned(reason, now);
        for (const id of abandoned) this.changed(id);
        return count;
      },
    };
  }

  /** Marks a sandbox whose record or usage changed here. */
  changed(sandboxId: string): void {
    this.#changed.add(sandboxId);
    if (this.#runnerId !== undefined) this.#round ??= this.#copyRounds();
  }

  /** Marks every sandbox of this instance's file (after this runner registered anew). */
  changedAll(ids: Iterable<string>): void {
    for (const id of ids) this.changed(id);
  }

  /**
   * Resolves once what was marked before the call has been copied (or its copy failed and was
   * put back for later): a request that changed a sandbox answers after every instance sees it.
   */
  settled(): Promise<void> {
    if (this.#round === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async #copyRounds(): Promise<void> {
    // A round starts after the changes of the current turn of the event loop are marked.
    await Promise.resolve();
    while (this.#changed.size > 0) {
      const ids = [...this.#changed];
      this.#changed.clear();
      // Who waited before this round began is served by its end.
      const waiting = this.#waiting;
      this.#waiting = [];
      const failed = await this.#copy(ids);
      for (const resolve of waiting) resolve();
      if (failed.length > 0 && !this.#closed) {
        for (const id of failed) this.#changed.add(id);
        await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
      }
    }
    this.#round = undefined;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Copies each sandbox; returns those whose copy failed. */
  async #copy(ids: readonly string[]): Promise<string[]> {
    const failed: string[] = [];
    for (const id of ids) {
      const found = this.store.byId(id);
      if (found === undefined) continue;
      const seen = this.#copied.get(id) ?? { lastId: 0, openIds: [], record: "" };
      const usage = this.store.usageRowsSince(id, seen.lastId, seen.openIds);
      // The other instances' live events hear of the record's changes, not of its usage's.
      const record = JSON.stringify(found.record);
      try {
        await this.directory.publish(
          this.#runnerId?.() ?? "",
          found.projectId,
          found.record,
          usage,
          record !== seen.record,
        );
        this.#copied.set(id, {
          lastId: usage.reduce((last, row) => Math.max(last, row.localId), seen.lastId),
          openIds: usage.filter((row) => row.endMs === null).map((row) => row.localId),
          record,
        });
        this.#warned = false;
      } catch (error) {
        failed.push(id);
        if (!this.#warned) {
          this.#warned = true;
          log.warn(
            `could not copy sandbox ${id} to the shared database (other instances see its last copy until it is copied again): ${(error as Error).message}`,
          );
        }
      }
    }
    return failed;
  }
}
