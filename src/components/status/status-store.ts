import type { CairnConnection, CairnRequestError } from "../client/connection.js";
import {
  type EventStreamState,
  type SandboxEvent,
  type SandboxExecEvent,
  type SandboxState,
  type SandboxUsageSample,
  subscribeSandboxEvents,
} from "../client/events.js";

/** What CairnStatus shows of a sandbox, as its event stream tells it. */
export interface SandboxStatusSnapshot {
  /** The sandbox's record, from its latest `state` event; undefined before the first. */
  readonly sandbox?: SandboxState | undefined;
  /** The latest resource sample; undefined until the first one (2 s after the stream opens). */
  readonly usage?: SandboxUsageSample | undefined;
  /** The execs seen starting and not yet ended, oldest first. */
  readonly execs: readonly SandboxExecEvent[];
  readonly stream: EventStreamState;
  /** Why the stream closed for good (the token expired, the sandbox is gone). */
  readonly error?: string | undefined;
  /**
   * The latest change worth telling a screen reader (status, reconnecting, reconnected,
   * disconnected): it changes on those changes only, never on a usage sample.
   */
  readonly announcement: string;
}

/** Nothing known yet: the snapshot of a server render too, as no stream opens there. */
export const initialStatus: SandboxStatusSnapshot = {
  execs: [],
  stream: "connecting",
  announcement: "",
};

/**
 * The live status of one sandbox, framework-free: it follows the sandbox's event stream while
 * someone subscribes (the first subscriber opens it, the last one leaving closes it), so a store
 * made during a server render opens nothing.
 */
export class SandboxStatusStore {
  #snapshot = initialStatus;
  readonly #listeners = new Set<() => void>();
  #stop: (() => void) | undefined;

  readonly #open: () => () => void;

  constructor(connection: CairnConnection, sandboxId: string) {
    this.#open = () =>
      subscribeSandboxEvents(connection, sandboxId, {
        onEvent: (event) => this.#event(event),
        onStreamState: (stream, error) => this.#streamState(stream, error),
      });
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    this.#stop ??= this.#open();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#stop?.();
        this.#stop = undefined;
      }
    };
  };

  getSnapshot = (): SandboxStatusSnapshot => this.#snapshot;

  #set(change: Partial<SandboxStatusSnapshot>): void {
    this.#snapshot = { ...this.#snapshot, ...change };
    for (const listener of this.#listeners) listener();
  }

  #event(event: SandboxEvent): void {
    const { execs, sandbox } = this.#snapshot;
    if (event.type === "state") {
      const status = event.sandbox.status;
      this.#set({
        sandbox: event.sandbox,
        ...(status !== sandbox?.status && {
          announcement: `Sandbox ${status}. ${event.sandbox.failure ?? ""}`,
        }),
      });
    } else if (event.type === "usage") {
      this.#set({ usage: event.usage });
    } else if (event.type === "exec") {
      const others = execs.filter((exec) => exec.execId !== event.exec.execId);
      this.#set({ execs: event.exec.state === "running" ? [...others, event.exec] : others });
    }
  }

  #streamState(stream: EventStreamState, failure?: Error): void {
    // The kit's own words for why, by status: the service's sentence is for developers (it may
    // name API routes and ids), and the people of a page read this one. A 404 is a sandbox gone;
    // the others a client cannot mend (401, 403) are its token's (budget: two sentences only).
    const error =
      failure &&
      ((failure as CairnRequestError).status === 404
        ? "the sandbox was not found"
        : "the sandbox token has expired or was revoked");
    const announcement =
      stream === "reconnecting"
        ? "Reconnecting…"
        : stream === "open" && this.#snapshot.stream === "reconnecting"
          ? "Reconnected"
          : error && `Disconnected: ${error}`;
    // Closed for good: what the stream last told (status, usage, commands) is no longer known.
    if (error) this.#snapshot = initialStatus;
    // The same sentence again (a second failed attempt) changes no text: nothing is re-read.
    this.#set({ stream, error, ...(announcement && { announcement }) });
  }
}
