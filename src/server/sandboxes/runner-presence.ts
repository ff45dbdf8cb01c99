import { randomUUID } from "node:crypto";
import { log } from "../../core/logger.js";
import type { SandboxDirectory } from "../store/postgres/sandbox-directory.js";

/** How a runner keeps its place among the instances on one database. */
export interface PresenceTimings {
  /** How often the runner writes its heartbeat and looks for runners gone stale. Default 5 s. */
  readonly heartbeatMs: number;
  /** A runner without a heartbeat this long is gone: its sandboxes are failed. Default 30 s. */
  readonly staleAfterMs: number;
}

export const defaultPresenceTimings: PresenceTimings = { heartbeatMs: 5000, staleAfterMs: 30_000 };

/**
 * This instance's runner in the shared database: registered under a new id at each start, with
 * the URL the other instances forward its sandboxes' requests to, and a heartbeat. Each beat
 * also sweeps: the runners gone stale have their live sandboxes marked failed. An instance only
 * sweeps after its own heartbeats have succeeded for a whole stale period, so that after the
 * database was out of reach, every runner has beaten again before any is judged.
 *
 * A runner that finds its own row gone was judged stale by another instance (a long pause, a
 * database out of its reach): its sandboxes are failed in the directory, so it fails them here
 * too (`fenced`), then registers again under a new id.
 */
export class RunnerPresence {
  #id = randomUUID();
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  /** Since when (ms, this clock) every heartbeat has succeeded; undefined after a failure. */
  #healthySince: number | undefined;
  #warned = false;

  private constructor(
    private readonly directory: SandboxDirectory,
    private readonly url: string,
    private readonly timings: PresenceTimings,
    private readonly fenced: (reason: string) => Promise<void>,
  ) {}

  static async start(
    directory: SandboxDirectory,
    url: string,
    timings: PresenceTimings,
    fenced: (reason: string) => Promise<void>,
  ): Promise<RunnerPresence> {
    const presence = new RunnerPresence(directory, url, timings, fenced);
    await directory.register(presence.#id, url);
    presence.#healthySince = Date.now();
    presence.#timer = setInterval(() => {
      presence.#beating ??= presence.#beat().finally(() => {
        presence.#beating = undefined;
      });
    }, timings.heartbeatMs);
    presence.#timer.unref();
    return presence;
  }

  /** The runner's id now (a new one after it was fenced). */
  get id(): string {
    return this.#id;
  }

  async #beat(): Promise<void> {
    try {
      if (!(await this.directory.heartbeat(this.#id))) {
        const reason =
          "this service instance missed its heartbeats for too long, and the other instances marked its sandboxes failed";
        log.warn(`${reason}; its sandboxes are stopped and it registers again`);
        this.#healthySince = undefined;
        await this.fenced(reason);
        this.#id = randomUUID();
        await this.directory.register(this.#id, this.url);
      }
      const now = Date.now();
      this.#healthySince ??= now;
      this.#warned = false;
      if (now - this.#healthySince >= this.timings.staleAfterMs) {
        const failed = await this.directory.failVanished();
        if (failed > 0) {
          log.warn(
            `${failed} sandbox(es) of service instances that stopped answering were marked failed`,
          );
        }
      }
    } catch (error) {
      this.#healthySince = undefined;
      if (!this.#warned) {
        this.#warned = true;
        log.warn(
          `could not write this instance's heartbeat to the shared database: ${(error as Error).message}`,
        );
      }
    }
  }

  /** Stops beating and leaves the directory (after this runner's sandboxes were stopped). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    await this.directory.unregister(this.#id);
  }
}
