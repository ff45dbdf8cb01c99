import { log } from "../../core/logger.js";
import type { ProjectResync } from "../../core/wire/project-events.js";
import { EventRing, type EventSink, type StreamEvent } from "../http/event-stream.js";
import { TokenBuckets } from "../http/rate-limit.js";

/** What changed, by the name of its event: `trace`, `test-run` or `sandbox`. */
export type ChangeKind = "trace" | "test-run" | "sandbox";

/** How a project's stream keeps up with a flood of changes; see `projectEventLimits`. */
export interface ChannelLimits {
  /** Events kept for clients that resume with Last-Event-ID. */
  readonly ringSize: number;
  /** How long changes are gathered (one event per trace, sandbox or run) before they are sent. */
  readonly flushMs: number;
  /** Events per second of each kind, on average; past it, a `resync` says what was left out. */
  readonly eventsPerSecond: number;
  /** Events of each kind sent at once after a quiet while. */
  readonly burst: number;
}

/**
 * The data of a change, read when it is sent (the store may answer later); undefined when it
 * is no longer there to send (a trace removed meanwhile).
 */
type Produce = () => unknown;

/**
 * The live events of one project: changes gathered for `flushMs` (a trace that grew five times
 * is one event, with its row as it is then), sent to every stream of the project and kept in a
 * ring for resuming. Each kind has its own budget, so a flood of traces delays nobody's sandbox
 * events: past it, changes are counted, not sent, and a `resync` event (at most one a second)
 * tells clients to read the lists again.
 */
export class ProjectChannel {
  readonly #ring: EventRing<StreamEvent>;
  readonly #sinks = new Set<EventSink>();
  readonly #pending = new Map<string, { kind: ChangeKind; produce: Produce }>();
  readonly #pendingByKind = new Map<ChangeKind, number>();
  readonly #budgets: TokenBuckets;
  readonly #dropped = new Map<ChangeKind, number>();
  #lastId: number;
  #lastResyncAt = Number.NEGATIVE_INFINITY;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing = false;

  /** @param before the id before this channel's first: above every id an earlier one gave */
  constructor(
    private readonly limits: ChannelLimits,
    before: number,
  ) {
    this.#ring = new EventRing(limits.ringSize, before);
    this.#lastId = before;
    this.#budgets = new TokenBuckets({
      requestsPerSecond: limits.eventsPerSecond,
      burst: limits.burst,
    });
  }

  get lastId(): number {
    return this.#lastId;
  }

  get followers(): number {
    return this.#sinks.size;
  }

  /**
   * A change to send with the next events: `produce` makes its data then (undefined: nothing to
   * send). A later change of the same `key` replaces it.
   */
  change(kind: ChangeKind, key: string, produce: Produce): void {
    const id = `${kind}:${key}`;
    const waiting = this.#pending.get(id);
    if (waiting !== undefined) {
      waiting.produce = produce;
    } else if ((this.#pendingByKind.get(kind) ?? 0) >= this.limits.burst) {
      // More than one flush can send: counted now, not held.
      this.#countDropped(kind, 1);
    } else {
      this.#pending.set(id, { kind, produce });
      this.#pendingByKind.set(kind, (this.#pendingByKind.get(kind) ?? 0) + 1);
    }
    this.#schedule();
  }

  /**
   * Follows the project's events. With `lastEventId`, the events after it are replayed first
   * when they are all still kept; else `resync` says to read the lists again. Then `ready`,
   * with the id to resume from, and the live events.
   */
  follow(sink: EventSink, lastEventId: number | undefined): () => void {
    const resumed = lastEventId !== undefined && this.#ring.covers(lastEventId);
    if (resumed) {
      for (const message of this.#ring.since(lastEventId)) sink.send(message);
    } else if (lastEventId !== undefined) {
      sink.send({
        id: this.#lastId,
        event: "resync",
        data: {
          reason: "history-lost",
          message: `the events after ${lastEventId} are no longer kept; read the lists again`,
        },
      });
    }
    sink.send({ id: this.#lastId, event: "ready", data: { resumed } });
    this.#sinks.add(sink);
    return () => this.#sinks.delete(sink);
  }

  /**
   * Tells every stream, and the clients that resume, to read the lists again now: changes may
   * have been made that this channel was not told of.
   */
  resync(reason: ProjectResync["reason"], message: string): void {
    this.#send("resync", { reason, message });
  }

  /** Cuts every stream off and stops sending. */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
    for (const sink of [...this.#sinks]) sink.abort();
    this.#sinks.clear();
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#flushing) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, this.limits.flushMs);
    this.#timer.unref();
  }

  async #flush(): Promise<void> {
    // One flush at a time, so that events keep their order while rows are read.
    this.#flushing = true;
    try {
      await this.#sendPending();
    } finally {
      this.#flushing = false;
    }
    if (this.#pending.size > 0) this.#schedule();
    if (this.#dropped.size === 0) return;
    if (performance.now() - this.#lastResyncAt < 1000) {
      this.#schedule();
      return;
    }
    this.#lastResyncAt = performance.now();
    const dropped = Object.fromEntries(this.#dropped);
    this.#dropped.clear();
    this.#send("resync", {
      reason: "rate-limited",
      dropped,
      message: "changes came faster than this stream sends them; read the lists again",
    });
  }

  /** Reads the data of the changes waiting (all at once), then sends them in order. */
  async #sendPending(): Promise<void> {
    const allowed = [];
    for (const change of this.#pending.values()) {
      if (this.#budgets.wait(change.kind) > 0) {
        this.#countDropped(change.kind, 1);
        continue;
      }
      this.#budgets.take(change.kind);
      allowed.push(change);
    }
    this.#pending.clear();
    this.#pendingByKind.clear();
    const produced = await Promise.allSettled(allowed.map(async ({ produce }) => await produce()));
    for (const [index, outcome] of produced.entries()) {
      const { kind } = allowed[index] as { kind: ChangeKind };
      if (outcome.status === "rejected") {
        // A row that cannot be read now (the store closing): left out, and counted in a resync.
        log.warn(`a ${kind} event was left out of the project's event stream`, outcome.reason);
        this.#countDropped(kind, 1);
      } else if (outcome.value !== undefined) {
        this.#send(kind, outcome.value);
      }
    }
  }

  #countDropped(kind: ChangeKind, count: number): void {
    this.#dropped.set(kind, (this.#dropped.get(kind) ?? 0) + count);
  }

  #send(event: string, data: unknown): void {
    this.#lastId += 1;
    const message: StreamEvent = { id: this.#lastId, event, data };
    this.#ring.push(message);
    for (const sink of this.#sinks) sink.send(message);
  }
}
