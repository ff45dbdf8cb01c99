import { log } from "../../core/logger.js";

/** How long a copy that failed (the database unreachable) waits before it is tried again. */
const retryMs = 1000;

/**
 * Copies of what this instance holds (sandboxes, agents) to the shared database, made in rounds:
 * a change only marks an id, and each round copies the latest state of every id marked since the
 * last, so that a burst of changes costs one write per id. Ids whose copy failed are marked
 * again and tried after a second. Copies wait for `begin` (this instance's runner registered).
 */
export class CopyRounds {
  readonly #changed = new Set<string>();
  #round: Promise<void> | undefined;
  #waiting: Array<() => void> = [];
  #begun = false;
  #closed = false;
  #warned = false;

  constructor(
    /** What is copied, for the log: sandbox, agent. */
    private readonly what: string,
    /** Writes the latest state of one; throws when it could not (it is tried again). */
    private readonly copyOne: (id: string) => Promise<void>,
  ) {}

  /** Starts copying (what was marked before too). */
  begin(): void {
    this.#begun = true;
    if (this.#changed.size > 0) this.#round ??= this.#copyRounds();
  }

  /** Stops trying again what could not be copied (the service is stopping). */
  close(): void {
    this.#closed = true;
  }

  /** Marks an id whose state changed here. */
  changed(id: string): void {
    this.#changed.add(id);
    if (this.#begun) this.#round ??= this.#copyRounds();
  }

  /**
   * Resolves once what was marked before the call has been copied (or its copy failed and was
   * put back for later): a request that changed something answers after every instance sees it.
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

  /** Copies each; returns those whose copy failed (said once until a copy succeeds again). */
  async #copy(ids: readonly string[]): Promise<string[]> {
    const failed: string[] = [];
    for (const id of ids) {
      try {
        await this.copyOne(id);
        this.#warned = false;
      } catch (error) {
        failed.push(id);
        if (!this.#warned) {
          this.#warned = true;
          log.warn(
            `could not copy ${this.what} ${id} to the shared database (other instances see its last copy until it is copied again): ${(error as Error).message}`,
          );
        }
      }
    }
    return failed;
  }
}
