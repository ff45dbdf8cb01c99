// Server-Sent Events as a fetch Response, shared by every event stream of the API: the frames,
// the retry hint, heartbeat comments, the cap on what a client leaves unread, and the ring of
// recent events a client resumes from with Last-Event-ID.

/** One event of a stream: its SSE name, its data (sent as JSON) and its id. */
export interface StreamEvent {
  readonly id: number;
  readonly event: string;
  readonly data: unknown;
}

/** Where a stream's events go, for as long as it is open. */
export interface EventSink {
  /** Queues an event; closes the stream instead when its client has left too much unread. */
  send(message: StreamEvent): void;
  /** Ends the stream once what is queued has been sent. */
  end(): void;
  /** Cuts the stream off now, queued events and all (the client resumes from its last id). */
  abort(): void;
}

export interface EventStreamOptions {
  /**
   * Bytes a client may leave unread before its stream is cut off, besides what `follow` sent
   * at once (a replay after Last-Event-ID, bounded by what is kept for replaying).
   */
  readonly unreadLimitBytes: number;
  /** A comment this often, so that a proxy between does not close a quiet stream. */
  readonly heartbeatMs: number;
  /** How long a client waits before it reconnects (the `retry:` field). Default 1000. */
  readonly retryMs?: number;
  /**
   * Cuts the response's connection, as the server adapter can. Without it a stream cut off
   * ends with an error, which the adapter logs.
   */
  readonly cut?: (() => void) | undefined;
  /**
   * Starts what feeds the stream, once it is open; returns what stops it, called once when the
   * stream ends, whichever side ends it.
   */
  follow(sink: EventSink): () => void;
}

const encoder = new TextEncoder();
const heartbeat = encoder.encode(": keep-alive\n\n");
/** What the stream holds before it counts as unread: a frame or two in flight is not. */
const queuedWatermark = 64 * 1024;

/** The frame of one event. */
export function eventFrame(message: StreamEvent): Uint8Array {
  return encoder.encode(
    `id: ${message.id}\nevent: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`,
  );
}

/**
 * A `text/event-stream` response fed by `options.follow`. Queued bytes are counted (the server
 * adapter reads the stream only as fast as the socket drains), and a client that leaves more
 * than `unreadLimitBytes` unread is cut off rather than held in memory.
 */
export function eventStreamResponse(options: EventStreamOptions): Response {
  let stop: (() => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const finish = () => {
    if (closed) return false;
    closed = true;
    if (timer !== undefined) clearInterval(timer);
    stop?.();
    return true;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const sink: EventSink = {
          send: (message) => enqueue(eventFrame(message)),
          end: () => {
            if (finish()) controller.close();
          },
          abort: () => {
            // The connection goes (a close would wait for a client that does not read, and hold
            // the server's shutdown with it); the adapter then cancels the stream.
            if (!finish()) return;
            if (options.cut === undefined) controller.error(new Error("event stream cut off"));
            else options.cut();
          },
        };
        // What the stream started with is not held against the client: a long replay is not
        // a client that stopped reading.
        let startedWith = Number.POSITIVE_INFINITY;
        const queuedBytes = () => queuedWatermark - (controller.desiredSize ?? 0);
        const enqueue = (bytes: Uint8Array) => {
          if (closed) return;
          if (queuedBytes() + bytes.byteLength > options.unreadLimitBytes + startedWith) {
            sink.abort();
          } else controller.enqueue(bytes);
        };
        enqueue(encoder.encode(`retry: ${options.retryMs ?? 1000}\n\n`));
        const stopFeed = options.follow(sink);
        startedWith = queuedBytes();
        if (closed) {
          stopFeed();
          return;
        }
        stop = stopFeed;
        timer = setInterval(() => enqueue(heartbeat), options.heartbeatMs);
        timer.unref();
      },
      cancel: () => {
        finish();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: queuedWatermark }),
  );
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}

/**
 * The last events of a stream, for clients that resume with Last-Event-ID: a fixed number, the
 * oldest dropped first. Ids must increase.
 */
export class EventRing<T extends { readonly id: number }> {
  readonly #items: Array<T | undefined>;
  #first = 0;
  #size = 0;
  /** The id of the newest event no longer kept (or the id before the first one). */
  #droppedThrough: number;
  #newest: number;

  /** @param before an id lower than any this ring will hold */
  constructor(capacity: number, before: number) {
    this.#items = new Array(capacity);
    this.#droppedThrough = before;
    this.#newest = before;
  }

  /** The id of the newest event, or the ring's `before` while it has had none. */
  get newestId(): number {
    return this.#newest;
  }

  push(item: T): void {
    const capacity = this.#items.length;
    if (this.#size === capacity) {
      this.#droppedThrough = (this.#items[this.#first] as T).id;
      this.#items[this.#first] = item;
      this.#first = (this.#first + 1) % capacity;
    } else {
      this.#items[(this.#first + this.#size) % capacity] = item;
      this.#size++;
    }
    this.#newest = item.id;
  }

  /** The events kept with an id above `id`, oldest first. */
  since(id: number): T[] {
    const found: T[] = [];
    for (let index = 0; index < this.#size; index++) {
      const item = this.#items[(this.#first + index) % this.#items.length] as T;
      if (item.id > id) found.push(item);
    }
    return found;
  }

  /** Whether every event after `id` is still kept: `id` is one this ring gave out, not too old. */
  covers(id: number): boolean {
    return id >= this.#droppedThrough && id <= this.#newest;
  }
}
