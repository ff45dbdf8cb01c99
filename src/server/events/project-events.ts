import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { EventSink } from "../http/event-stream.js";
import type { TraceSummary } from "../store/trace-list.js";
import { type ChannelLimits, ProjectChannel } from "./project-channel.js";

/** The limits of `GET /events`; see {@link projectEventLimits}. */
export type ProjectEventLimits = { -readonly [Key in keyof ChannelLimits]: ChannelLimits[Key] } & {
  /** How long a project's events are still gathered after its last stream closed. */
  lingerMs: number;
  /** Bytes a client may leave unread before its stream is cut off (it resumes from its id). */
  unreadLimitBytes: number;
  /** A comment this often, so that a proxy between does not close a quiet stream. */
  heartbeatMs: number;
};

/**
 * The limits of `GET /events`: the channel's when a project's channel is made, the stream's
 * when a stream opens. Tests may change them.
 */
export const projectEventLimits: ProjectEventLimits = {
  ringSize: 1024,
  flushMs: 200,
  eventsPerSecond: 20,
  burst: 50,
  lingerMs: 60_000,
  unreadLimitBytes: 1024 * 1024,
  heartbeatMs: 15_000,
};

/** A trace's row as the trace list returns it, or undefined when the project has no such trace. */
export type TraceRowReader = (
  projectId: string,
  traceHex: string,
) => Promise<TraceSummary | undefined>;

/**
 * The live events of every project (`GET /events`): what the stores and the runner report is
 * sent to the streams of its project only. A project is followed from its first stream until
 * `lingerMs` after its last one closed, so a client that reconnects resumes without loss;
 * changes of a project no one follows cost nothing.
 */
export class ProjectEvents {
  readonly #channels = new Map<
    string,
    { channel: ProjectChannel; linger?: NodeJS.Timeout | undefined }
  >();
  /** The last id each project's channel gave, so that a new channel gives none of them again. */
  readonly #lastIds = new Map<string, number>();
  #closed = false;

  constructor(private readonly traceRow: TraceRowReader) {}

  /** Traces of the project that gained spans (32-hex ids), after their commit. */
  tracesStored(projectId: string, traceHexes: Iterable<string>): void {
    const channel = this.#channels.get(projectId)?.channel;
    if (channel === undefined) return;
    for (const hex of traceHexes) {
      channel.change("trace", hex, () => this.traceRow(projectId, hex));
    }
  }

  /** A sandbox of the project was created or changed: its record as the list returns it. */
  sandboxChanged(projectId: string, record: SandboxRecord): void {
    this.#channels.get(projectId)?.channel.change("sandbox", record.id, () => record);
  }

  /** A test run of the project was recorded, given results or finished: its row in the run list. */
  testRunChanged(projectId: string, run: { readonly run_id: string }): void {
    this.#channels.get(projectId)?.channel.change("test-run", run.run_id, () => run);
  }

  /**
   * Changes of any project may have been made without this instance being told (its link to
   * the other instances on the database was lost for a while): every project followed, or
   * lingering for clients to resume, tells its streams to read the lists again.
   */
  changesMissed(): void {
    for (const { channel } of this.#channels.values()) {
      channel.resync(
        "link-lost",
        "this service instance lost its link to the others for a moment, and changes made through them then were not told; read the lists again",
      );
    }
  }

  /**
   * Follows a project's events; see ProjectChannel.follow. Returns what stops following.
   */
  follow(projectId: string, sink: EventSink, lastEventId: number | undefined): () => void {
    if (this.#closed) {
      sink.abort();
      return () => undefined;
    }
    let entry = this.#channels.get(projectId);
    if (entry === undefined) {
      // Ids start from the clock (in microseconds) and above the last channel's: an id from an
      // earlier channel or an earlier run is never taken for one of this channel's.
      const before = Math.max(Date.now() * 1000, (this.#lastIds.get(projectId) ?? 0) + 1);
      entry = { channel: new ProjectChannel({ ...projectEventLimits }, before) };
      this.#channels.set(projectId, entry);
    }
    if (entry.linger !== undefined) clearTimeout(entry.linger);
    entry.linger = undefined;
    const found = entry;
    const unfollow = found.channel.follow(sink, lastEventId);
    return () => {
      unfollow();
      if (found.channel.followers > 0 || found.linger !== undefined || this.#closed) return;
      found.linger = setTimeout(
        () => this.#forget(projectId, found.channel),
        projectEventLimits.lingerMs,
      );
      found.linger.unref();
    };
  }

  /** Cuts every stream off (the server is shutting down); nothing is sent after. */
  close(): void {
    this.#closed = true;
    for (const { channel, linger } of this.#channels.values()) {
      if (linger !== undefined) clearTimeout(linger);
      channel.close();
    }
    this.#channels.clear();
  }

  #forget(projectId: string, channel: ProjectChannel): void {
    if (this.#channels.get(projectId)?.channel !== channel) return;
    this.#channels.delete(projectId);
    this.#lastIds.set(projectId, channel.lastId);
    channel.close();
  }
}
