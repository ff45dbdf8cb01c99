// GET /events as a client reads it, for the tests of the project's live events (one service,
// or several instances on one database).

import { randomBytes } from "node:crypto";
import { afterEach, expect } from "vitest";
import { readServerSentEvents } from "../../src/core/http/sse.js";
import { resource, span, type TestServer } from "./helpers.js";

export interface Received {
  readonly event: string;
  readonly id: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the events' data is checked field by field
  readonly data: any;
}

/** A stream of GET /events read as a browser's EventSource would, events kept in order. */
export class EventStream {
  readonly events: Received[] = [];
  readonly status: Promise<number>;
  readonly ended: Promise<void>;
  readonly #abort = new AbortController();
  readonly #waiters = new Set<() => void>();
  #done = false;

  constructor(url: string, headers: Record<string, string>) {
    const response = fetch(url, { headers, signal: this.#abort.signal });
    // 0: no answer came (the test aborted the request first).
    this.status = response.then(
      (answer) => answer.status,
      () => 0,
    );
    this.ended = (async () => {
      try {
        const answer = await response;
        if (answer.body === null || !answer.ok) return;
        for await (const { event, id, data } of readServerSentEvents(answer.body)) {
          this.events.push({ event, id, data: JSON.parse(data) });
          for (const wake of this.#waiters) wake();
        }
      } catch {
        // Aborted, or cut off by the server: the test looks at what came.
      } finally {
        this.#done = true;
        for (const wake of this.#waiters) wake();
      }
    })();
  }

  /** The first event that matches, once it has come; fails if the stream ends without it. */
  until(match: (event: Received) => boolean, what: string): Promise<Received> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.events.find(match);
        if (found !== undefined) {
          this.#waiters.delete(look);
          resolve(found);
        } else if (this.#done) {
          this.#waiters.delete(look);
          reject(new Error(`the stream ended without ${what}; got ${this.describe()}`));
        }
      };
      this.#waiters.add(look);
      look();
    });
  }

  of(event: string): Received[] {
    return this.events.filter((each) => each.event === event);
  }

  describe(): string {
    return JSON.stringify(this.events.map((each) => `${each.id} ${each.event}`));
  }

  close(): Promise<void> {
    this.#abort.abort();
    return this.ended;
  }
}

export interface FollowOptions {
  readonly key?: string;
  readonly lastEventId?: string;
  readonly path?: string;
}

/**
 * Opens streams of GET /events for the test file that calls it (at its top level): each is
 * closed after its test.
 */
export function eventStreams() {
  const streams: EventStream[] = [];
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((stream) => stream.close()));
  });
  const follow = (t: TestServer, options: FollowOptions = {}): EventStream => {
    const stream = new EventStream(`${t.server.url}${options.path ?? "/events"}`, {
      "x-api-key": options.key ?? t.apiKey,
      ...(options.lastEventId === undefined ? {} : { "last-event-id": options.lastEventId }),
    });
    streams.push(stream);
    return stream;
  };
  /** A stream that has caught up (its `ready` came): what is sent after reaches it. */
  const opened = async (t: TestServer, options: FollowOptions = {}): Promise<EventStream> => {
    const stream = follow(t, options);
    await stream.until(isReady, "ready");
    return stream;
  };
  return { follow, opened };
}

export const isReady = (event: Received) => event.event === "ready";

export const isTrace = (traceId: string) => (event: Received) =>
  event.event === "trace" && event.data.trace_id === traceId;

/** A new trace id, as tr_ + 32 hex. */
export const newTraceId = () => `tr_${randomBytes(16).toString("hex")}`;
const now = () => new Date().toISOString();

/** `count` spans of one trace (the first its root), started now. */
export function traceSpans(traceId: string, count: number, name = "agent") {
  return Array.from({ length: count }, (_, index) =>
    span({
      trace_id: traceId,
      parent_span_id: index === 0 ? null : "0000000000000001",
      ...(index === 0 ? { span_id: "0000000000000001", name } : {}),
      start_time: now(),
      end_time: now(),
      duration_ms: 0,
    }),
  );
}

export async function postSpans(t: TestServer, spans: unknown[], key = t.apiKey): Promise<void> {
  const response = await t.call("POST", "/traces", { resource, spans }, { "x-api-key": key });
  expect(response.status).toBe(200);
}

/** The trace's row in GET /analytics/traces (the first 200 rows), as the service gives it. */
export async function listRow(t: TestServer, traceId: string, key = t.apiKey) {
  const response = await t.call("GET", "/analytics/traces?limit=200", undefined, {
    "x-api-key": key,
  });
  const { traces } = (await response.json()) as { traces: Array<{ trace_id: string }> };
  return traces.find((row) => row.trace_id === traceId);
}
