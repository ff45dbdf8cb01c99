import type { DatabaseSync } from "node:sqlite";
import { log } from "../../core/logger.js";
import { CopyRounds } from "../sandboxes/copy-rounds.js";
import type { AgentDirectory } from "../store/postgres/agent-directory.js";
import { agentChannelsOf } from "./channels/channel-store.js";
import type { AgentStore, StoredAgent } from "./store.js";

/**
 * Copies this instance's agents (records and their channels' ids, from its SQLite file) to the
 * shared database's directory as they change, in coalesced rounds as the sandboxes' are
 * (copy-rounds.ts); an agent deleted here is deleted there, which frees its name. A copy that
 * fails is tried again; the records here stay the truth, but for an agent deleted through
 * another instance while this one was gone, which is deleted here.
 */
export class AgentMirror {
  readonly #rounds = new CopyRounds("agent", (id) => this.#copy(id));
  #runnerId: (() => string) | undefined;

  constructor(
    private readonly db: DatabaseSync,
    private readonly store: () => AgentStore,
    readonly directory: AgentDirectory,
    /**
     * Deletes an agent here (stops it, deletes its record) that was deleted through another
     * instance while this one was gone: the directory refuses its copy.
     */
    private readonly deletedElsewhere: (agent: StoredAgent) => Promise<void>,
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

  /**
   * Copies an agent's record and channels, or deletes its copy once it is gone here; an agent
   * deleted elsewhere is deleted here (which marks it again: its copy is then removed).
   */
  async #copy(id: string): Promise<void> {
    const agent = this.store().byId(id);
    if (agent === undefined) {
      await this.directory.remove(id);
      return;
    }
    const runnerId = this.#runnerId?.() ?? "";
    if (!(await this.directory.publish(runnerId, agent, agentChannelsOf(this.db, id)))) {
      log.info(
        `agent ${agent.name} (${agent.id}) was deleted through another instance while this one was gone; deleting it here`,
      );
      await this.deletedElsewhere(agent);
    }
  }
}
