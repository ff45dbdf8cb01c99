import type { SandboxRecords } from "../../sandbox/runner/runner.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";
import type { SandboxStore } from "../store/sandboxes.js";
import { CopyRounds } from "./copy-rounds.js";

/**
 * Copies this instance's sandboxes (records and usage, from its SQLite file) to the shared
 * database's directory as they change, in coalesced rounds (copy-rounds.ts): a burst of changes
 * (egress bytes, CPU checkpoints) costs one write per sandbox. A copy that fails is tried
 * again; the records here stay the truth.
 */
export class SandboxMirror {
  /** Per sandbox: the highest usage row copied, and the rows that were open then. */
  readonly #copied = new Map<string, { lastId: number; openIds: number[]; record: string }>();
  readonly #rounds = new CopyRounds("sandbox", (id) => this.#copy(id));
  /** This instance's runner id, once it is registered: copies wait for it. */
  #runnerId: (() => string) | undefined;

  constructor(
    private readonly store: SandboxStore,
    private readonly directory: SandboxDirectory,
  ) {}

  /** Starts copying, as the runner `runnerId` gives (registered in the directory by then). */
  begin(runnerId: () => string): void {
    this.#runnerId = runnerId;
    this.#rounds.begin();
  }

  /** Stops trying again what could not be copied (the service is stopping). */
  close(): void {
    this.#rounds.close();
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
    this.#rounds.changed(sandboxId);
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
    return this.#rounds.settled();
  }

  /** Copies a sandbox's record and the usage rows not copied yet. */
  async #copy(id: string): Promise<void> {
    const found = this.store.byId(id);
    if (found === undefined) return;
    const seen = this.#copied.get(id) ?? { lastId: 0, openIds: [], record: "" };
    const usage = this.store.usageRowsSince(id, seen.lastId, seen.openIds);
    // The other instances' live events hear of the record's changes, not of its usage's.
    const record = JSON.stringify(found.record);
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
  }
}
