import { readServerSentEvents } from "../../core/http/sse.js";
import {
  answerError,
  type CairnConnection,
  type CairnRequestError,
  connectionHeaders,
  serviceUrl,
} from "./connection.js";

/**
 * What `GET /api/sandboxes/{id}/events` sends (Server-Sent Events, each with an increasing
 * `id:` for `Last-Event-ID`), as the kit reads it.
 */
export type SandboxEvent =
  /** The sandbox's record, first on every connection and again on each change. */
  | { readonly type: "state"; readonly sandbox: SandboxState }
  /** An exec started or ended. */
  | { readonly type: "exec"; readonly exec: SandboxExecEvent }
  /** A resource sample, every two seconds while the sandbox runs. */
  | { readonly type: "usage"; readonly usage: SandboxUsageSample }
  /** Files changed under /workspace (coalesced: at most one event per 250 ms). */
  | { readonly type: "files"; readonly changes: readonly FileChange[] };

export interface SandboxState {
  readonly id: string;
  readonly template: string;
  readonly status: "creating" | "running" | "stopped" | "failed" | "timed_out" | "killed" | string;
  readonly cpuCount: number;
  readonly memoryMB: number;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly endedAt: string | null;
  readonly failure: string | null;
}

export interface SandboxExecEvent {
  readonly execId: string;
  readonly command: string;
  readonly state: "running" | "ended";
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

export interface SandboxUsageSample {
  readonly at: string;
  /** CPU in use over the last interval, in cores (0 to cpuCount). */
  readonly cpuCores: number;
  readonly cpuCount: number;
  readonly memoryBytes: number;
  readonly memoryLimitBytes: number;
  readonly runningExecs: number;
}

export interface FileChange {
  /** Absolute, under /workspace. */
  readonly path: string;
  readonly change: "created" | "modified" | "deleted";
}

/** How the event stream is doing, for a visible "reconnecting" state. */
export type EventStreamState = "connecting" | "open" | "reconnecting" | "closed";

export interface SandboxEventHandlers {
  readonly onEvent: (event: SandboxEvent) => void;
  readonly onStreamState?: (state: EventStreamState, error?: Error) => void;
}

/**
 * How long the service may take to answer, and an open stream stay silent (the service sends a
 * comment every 15 s), before the connection counts as dropped and is made again. Tests may
 * change them.
 */
export const eventStreamTimeouts = { answerMs: 20_000, quietMs: 45_000 };

const eventTypes = new Set(["state", "exec", "usage", "files"]);

/** Statuses after which a sandbox sends nothing more. */
export const finalStatuses = new Set(["stopped", "failed", "expired", "killed", "timed_out"]);

/**
 * One stream and its subscribers; its latest state event and stream state, told at once to a
 * subscriber joining later.
 */
type SharedStream = Set<SandboxEventHandlers> & {
  state?: Extract<SandboxEvent, { type: "state" }>;
  stream?: [EventStreamState, Error?];
  stop?: () => void;
};

/** The streams open now, by fetch, then by endpoint, credentials and sandbox. */
const openStreams = new Map<unknown, Map<string, SharedStream>>();

/**
 * Follows a sandbox's events until the returned function is called: read with fetch (headers
 * can carry the token, which EventSource cannot), reconnected with backoff after a drop — a
 * stream that ends before the sandbox has, one that goes silent, an answer that does not come —
 * and resumed from the last event seen with `Last-Event-ID`. Ends by itself once the sandbox
 * has ended, or on a 4xx answer (the token expired, the sandbox is gone).
 *
 * Subscribers of the same sandbox through the same endpoint, credentials and fetch (CairnStatus
 * and CairnFileManager on one page) share one stream: the first opens it, the last one leaving
 * closes it, and one joining later is told the latest state event and stream state at once.
 */
export function subscribeSandboxEvents(
  connection: CairnConnection,
  sandboxId: string,
  handlers: SandboxEventHandlers,
): () => void {
  const streams = openStreams.get(connection.fetch) ?? new Map<string, SharedStream>();
  openStreams.set(connection.fetch, streams);
  const key = `${connection.endpoint} ${connection.token} ${connection.apiKey} ${sandboxId}`;
  const shared: SharedStream = streams.get(key) ?? new Set();
  if (shared.state) handlers.onEvent(shared.state);
  if (shared.stream) handlers.onStreamState?.(...shared.stream);
  shared.add(handlers);
  if (!shared.stop) {
    streams.set(key, shared);
    shared.stop = follow(connection, sandboxId, shared);
  }
  return () => {
    if (shared.delete(handlers) && !shared.size) {
      shared.stop?.();
      streams.delete(key);
    }
  };
}

function follow(
  connection: CairnConnection,
  sandboxId: string,
  subscribers: SharedStream,
): () => void {
  // The attempt under way, null once stopped; stopping aborts it. What happens after a stop is told to nobody: the
  // last subscriber has left, and one coming later opens a stream of its own.
  let attempt: AbortController | null | undefined;
  let lastEventId: string | undefined;
  let failures = 0;

  const setState = (...stream: [EventStreamState, Error?]) => {
    subscribers.stream = stream;
    for (const subscriber of subscribers) subscriber.onStreamState?.(...stream);
  };

  void (async () => {
    setState("connecting");
    while (attempt !== null) {
      const headers = connectionHeaders(connection);
      if (lastEventId) headers["last-event-id"] = lastEventId;
      // This attempt ends with the subscription, or when the service stays quiet too long: no
      // answer within answerMs, then not a byte (a keep-alive comment is one) within quietMs.
      const quiet = new AbortController();
      attempt = quiet;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const heard = (ms = eventStreamTimeouts.quietMs) => {
        clearTimeout(timer);
        timer = setTimeout(() => quiet.abort(), ms);
      };
      heard(eventStreamTimeouts.answerMs);
      try {
        const response = await (connection.fetch ?? fetch)(
          serviceUrl(connection, `/api/sandboxes/${encodeURIComponent(sandboxId)}/events`),
          { headers, signal: quiet.signal },
        );
        if (!response.ok) throw await answerError(response);
        setState("open");
        failures = 0;
        heard();
        for await (const { event, data, id } of readServerSentEvents(
          response.body as ReadableStream<Uint8Array>,
          heard,
        )) {
          lastEventId = id ?? lastEventId;
          if (!eventTypes.has(event)) continue;
          let parsed: SandboxEvent;
          try {
            parsed = { type: event, ...JSON.parse(data) } as SandboxEvent;
          } catch {
            continue; // A malformed event is dropped; the next state event brings the truth.
          }
          if (parsed.type === "state") subscribers.state = parsed;
          for (const subscriber of subscribers) subscriber.onEvent(parsed);
        }
      } catch (error) {
        // A refusal (4xx but 429: the token, the sandbox) is for good; anything else (a 5xx, a
        // 429, a drop, a timeout, an event over the cap) is tried again.
        const { status } = error as CairnRequestError;
        if (status < 500 && status !== 429) return setState("closed", error as Error);
      } finally {
        clearTimeout(timer);
      }
      // Only a sandbox that has ended ends the stream; any other end (the service cuts a slow
      // reader, a proxy an idle stream) is resumed from the last event with Last-Event-ID.
      if (finalStatuses.has(subscribers.state?.sandbox.status as string)) {
        return setState("closed");
      }
      setState("reconnecting");
      // 0.5 s, 1 s, 2 s … up to 15 s between attempts.
      await new Promise((resolve) => setTimeout(resolve, Math.min(15_000, 250 * 2 ** ++failures)));
    }
  })();
  return () => {
    attempt?.abort();
    attempt = null;
  };
}
