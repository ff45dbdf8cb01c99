import { answerError, type CairnConnection, connectionHeaders, serviceUrl } from "./connection.js";
import { readServerSentEvents } from "./sse.js";

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
 * How long the service may take to answer, or an open stream stay silent (the service sends a
 * comment every 15 s), before the connection counts as dropped.
 */
const quietMs = 40_000;

const eventTypes = new Set(["state", "exec", "usage", "files"]);

/** Statuses after which a sandbox sends nothing more. */
export const finalStatuses = new Set(["stopped", "failed", "expired", "killed", "timed_out"]);

/**
 * Follows a sandbox's events until the returned function is called: read with fetch (headers
 * can carry the token, which EventSource cannot), reconnected with backoff after a drop — a
 * stream that ends before the sandbox has, one that goes silent, an answer that does not come —
 * and resumed from the last event seen with `Last-Event-ID`. Ends by itself once the sandbox
 * has ended, or on a 4xx answer (the token expired, the sandbox is gone).
 */
export function subscribeSandboxEvents(
  connection: CairnConnection,
  sandboxId: string,
  handlers: SandboxEventHandlers,
): () => void {
  const abort = new AbortController();
  let lastEventId: string | undefined;
  let failures = 0;
  let sandboxEnded = false;

  const setState = (state: EventStreamState, error?: Error) =>
    handlers.onStreamState?.(state, error);

  const readOnce = async (): Promise<void> => {
    const headers: Record<string, string> = {
      ...connectionHeaders(connection),
      accept: "text/event-stream",
    };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    // This attempt ends with the subscription, or when the service stays quiet too long.
    const quiet = new AbortController();
    const signal = AbortSignal.any([abort.signal, quiet.signal]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const heard = () => {
      clearTimeout(timer);
      timer = setTimeout(() => quiet.abort(), quietMs);
    };
    heard();
    try {
      const response = await (connection.fetch ?? fetch)(
        serviceUrl(connection, `/api/sandboxes/${encodeURIComponent(sandboxId)}/events`),
        { headers, signal, cache: "no-store" },
      );
      if (!response.ok) {
        const error = await answerError(response);
        if (response.status >= 400 && response.status < 500 && response.status !== 429) throw error;
        return;
      }
      setState("open");
      failures = 0;
      heard();
      for await (const { event, data, id } of readServerSentEvents(
        response.body ?? new ReadableStream(),
        heard,
      )) {
        if (id !== undefined) lastEventId = id;
        if (!eventTypes.has(event)) continue;
        let parsed: SandboxEvent;
        try {
          parsed = { type: event, ...JSON.parse(data) } as SandboxEvent;
        } catch {
          continue; // A malformed event is dropped; the next state event brings the truth.
        }
        if (parsed.type === "state") sandboxEnded = finalStatuses.has(parsed.sandbox.status);
        handlers.onEvent(parsed);
      }
    } finally {
      clearTimeout(timer);
    }
  };

  const run = async () => {
    setState("connecting");
    while (!abort.signal.aborted && !sandboxEnded) {
      try {
        await readOnce();
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof Error && "status" in error) {
          setState("closed", error);
          return;
        }
      }
      if (abort.signal.aborted || sandboxEnded) break;
      failures += 1;
      setState("reconnecting");
      // 0.5 s, 1 s, 2 s … up to 15 s between attempts.
      const delay = Math.min(15_000, 500 * 2 ** Math.min(failures - 1, 5));
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    if (!abort.signal.aborted) setState("closed");
  };
  void run();
  return () => abort.abort();
}
