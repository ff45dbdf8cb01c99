import type { DatabaseSync } from "node:sqlite";
import { CopyRounds } from "../sandboxes/copy-rounds.js";
import type { AgentDirectory } from "../store/postgres/agent-directory.js";
import { agentChannelsOf } from "./channels/channel-store.js";
import type { AgentStore } from "./store.js";

/**
 * Copies this instance's agents (records and their channels' ids, from its SQLite file) to the
 * shared database's directory as they change, in coalesced rounds as the sandboxes' are
 * (copy-rounds.ts); an agent deleted here is deleted there, which frees its name. A copy that
 * fails is tried again; the records here stay the truth.
 */
export class AgentMirror {
  readonly #rounds = new CopyRounds("agent", (id) => this.#copy(id));
  #runnerId: (() => string) | undefined;

  constructor(
    private readonly db: DatabaseSync,
    private readonly store: () => AgentStore,
    readonly directory: AgentDirectory,
  ) {}

  /** The runner this instance runs its agents as, once registered; undefined before. */
  runnerId(): string | undefined {
    return this.#runnerId?.();
  }

  /** Starts copying every agent of this instance's file, as the runner `runnerId` gives. */
  begin(runnerId: () => string): void {
    this.#runnerId = runnerId;
    for (const id of this.store().ids()) this.#rounds.changed(id);
    this.#rounds.begin();
  }

  /** Stops trying again what could not be copied (the service is stopping). */
  close(): void {
    this.#rounds.close();
  }

  /** Marks an agent whose record or channels changed here. */
  changed(agentId: string): void {
    this.#rounds.changed(agentId);
  }

  /** Resolves once what was marked before the call has been copied (or put back for later). */
  settled(): Promise<void> {
    return this.#rounds.settled();
  }

  /** Copies an agent's record and channels, or deletes its copy once it is gone here. */
  async #copy(id: string): Promise<void> {
    const agent = this.store().byId(id);
    if (agent === undefined) await this.directory.remove(id);
    else
      await this.directory.publish(this.#runnerId?.() ?? "", agent, agentChannelsOf(this.db, id));
  }
}
