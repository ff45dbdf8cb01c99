// An in-memory stand-in for `GET /api/sandboxes/{id}/events`, answering as the real route does
// (src/server/sandboxes/events/event-routes.ts): `retry: 1000` first, a `state` event at once on
// every connection, then `state`, `exec` and `usage` events with increasing ids, the events after
// `Last-Event-ID` replayed on a reconnect, the stream closed when the sandbox ends, 401 without
// a token and 404 for another sandbox. It can drop its streams and refuse connections for a
// while, as a network does.

import type { CairnConnection } from "../../src/components/client/connection.js";
import type { SandboxExecEvent, SandboxUsageSample } from "../../src/components/client/events.js";

/** A sandbox's record as the API returns it (src/core/wire/sandbox.ts). */
export interface FakeSandboxRecord {
  id: string;
  template: string;
  status: "creating" | "running" | "stopping" | "stopped" | "failed" | "expired";
  cpuCount: number;
  memoryMB: number;
  diskMB: number;
  tags: Record<string, string>;
  tagsLastUpdatedAt: string;
  createdAt: string;
  expiresAt: string;
  endedAt: string | null;
  unenforcedLimits: string[];
  failure: string | null;
  secretStore: string | null;
}

export interface StatusServiceOptions {
  readonly sandbox?: Partial<FakeSandboxRecord>;
  /** Sends a usage sample this often while a stream is open (the real one: 2000 ms). */
  readonly usageEveryMs?: number;
  /** The first usage sample, sent right after the state event (default: none until the timer). */
  readonly firstUsage?: Partial<SandboxUsageSample>;
}

const finalStatuses = new Set(["stopped", "failed", "expired"]);
const encoder = new TextEncoder();
const endpoint = "http://cairn.test";
const token = "sbt_fake_browser_token";

export function fakeSandboxRecord(change: Partial<FakeSandboxRecord> = {}): FakeSandboxRecord {
  const now = Date.now();
  return {
    id: "sbx_0123456789abcdef01234567",
    template: "node-22",
    status: "running",
    cpuCount: 2,
    memoryMB: 512,
    diskMB: 2048,
    tags: {},
    tagsLastUpdatedAt: new Date(now - 754_000).toISOString(),
    createdAt: new Date(now - 754_000).toISOString(),
    expiresAt: new Date(now + 2_646_000).toISOString(),
    endedAt: null,
    unenforcedLimits: [],
    failure: null,
    secretStore: null,
    ...change,
  };
}

/** The fake service, its connection for the components, and handles to drive it. */
export function createStatusService(options: StatusServiceOptions = {}) {
  let record = fakeSandboxRecord(options.sandbox);
  let lastId = 1_700_000_000_000;
  const recent: Array<{ id: number; frame: string }> = [];
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  let offline = false;
  let expired = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let sample = 0;
  const requests: Array<{ lastEventId: string | null }> = [];

  const frame = (id: number, event: string, data: unknown) =>
    `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

  const usageSample = (change: Partial<SandboxUsageSample> = {}): SandboxUsageSample => {
    sample += 1;
    return {
      at: new Date().toISOString(),
      cpuCores: Math.round((0.4 + 0.3 * Math.sin(sample)) * 1000) / 1000,
      cpuCount: record.cpuCount,
      memoryBytes: (180 + 10 * (sample % 5)) * 1024 * 1024,
      memoryLimitBytes: record.memoryMB * 1024 * 1024,
      runningExecs: 0,
      ...change,
    };
  };

  const send = (event: string, data: unknown) => {
    lastId += 1;
    const text = frame(lastId, event, data);
    recent.push({ id: lastId, frame: text });
    if (recent.length > 256) recent.shift();
    for (const stream of streams) stream.enqueue(encoder.encode(text));
  };

  const stopTimer = () => {
    if (timer !== undefined && streams.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const closeAll = () => {
    for (const stream of streams) stream.close();
    streams.clear();
    stopTimer();
  };

  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });

  const fakeFetch: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === "string" ? input : (input as Request).url);
    const headers = new Headers(init?.headers);
    if (offline) throw new TypeError("Failed to fetch");
    const match = url.pathname.match(/^\/api\/sandboxes\/([^/]+)\/events$/);
    if (match === null || (init?.method ?? "GET") !== "GET") {
      return json(404, { error: "not_found", message: `no route ${url.pathname}` });
    }
    if (!headers.get("authorization")?.startsWith("Bearer ")) {
      return json(401, { error: "unauthorized", message: "give a token or an API key" });
    }
    if (expired) {
      // As src/server/sandboxes/token-caller.ts answers a token that expired or was revoked.
      return json(401, {
        error: "unauthorized",
        message:
          "the sandbox token is not valid: unknown, expired or revoked, or its sandbox has stopped; the app must get a new one",
      });
    }
    if (decodeURIComponent(match[1] ?? "") !== record.id) {
      return json(404, {
        error: "sandbox_not_found",
        message: `sandbox ${match[1]} not found`,
        sandbox_id: match[1],
      });
    }
    const lastEventId = headers.get("last-event-id");
    requests.push({ lastEventId });
    const resumeFrom = Number.parseInt(lastEventId ?? "", 10);
    let self: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        self = controller;
        controller.enqueue(encoder.encode("retry: 1000\n\n"));
        lastId += 1;
        controller.enqueue(encoder.encode(frame(lastId, "state", { sandbox: record })));
        if (finalStatuses.has(record.status)) {
          controller.close();
          return;
        }
        if (Number.isFinite(resumeFrom)) {
          for (const kept of recent) {
            if (kept.id > resumeFrom) controller.enqueue(encoder.encode(kept.frame));
          }
        }
        streams.add(controller);
        if (options.firstUsage !== undefined) {
          lastId += 1;
          controller.enqueue(
            encoder.encode(frame(lastId, "usage", { usage: usageSample(options.firstUsage) })),
          );
        }
        if (options.usageEveryMs !== undefined && timer === undefined) {
          timer = setInterval(() => send("usage", { usage: usageSample() }), options.usageEveryMs);
        }
      },
      cancel() {
        if (self !== undefined) streams.delete(self);
        stopTimer();
      },
    });
    init?.signal?.addEventListener("abort", () => {
      if (self !== undefined) streams.delete(self);
      stopTimer();
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
      },
    });
  };

  const connection: CairnConnection = { endpoint, token, fetch: fakeFetch };
  let execCounter = 0;

  return {
    connection,
    sandboxId: record.id,
    /** What each connection asked with (its Last-Event-ID). */
    requests,
    get openStreams() {
      return streams.size;
    },
    /** Changes the record and sends the `state` event; a final status ends the streams. */
    setState(change: Partial<FakeSandboxRecord>) {
      record = { ...record, ...change };
      send("state", { sandbox: record });
      if (finalStatuses.has(record.status)) closeAll();
    },
    usage(change: Partial<SandboxUsageSample> = {}) {
      send("usage", { usage: usageSample(change) });
    },
    /** An exec starts; returns its id. */
    execStart(command: string): string {
      execCounter += 1;
      const exec: SandboxExecEvent = {
        execId: `exec_${String(execCounter).padStart(4, "0")}`,
        command,
        state: "running",
        exitCode: null,
        startedAt: new Date().toISOString(),
        endedAt: null,
      };
      send("exec", { exec });
      return exec.execId;
    },
    execEnd(execId: string, command: string, exitCode = 0) {
      send("exec", {
        exec: {
          execId,
          command,
          state: "ended",
          exitCode,
          startedAt: new Date().toISOString(),
          endedAt: new Date().toISOString(),
        },
      });
    },
    /** The network drops every open stream; with `stayOffline`, new connections fail too. */
    drop(stayOffline = false) {
      offline = stayOffline;
      for (const stream of streams) stream.error(new TypeError("network error"));
      streams.clear();
      stopTimer();
    },
    /** The token expires (or is revoked): open streams end, and every new connection is a 401. */
    expireToken() {
      expired = true;
      closeAll();
    },
    /** The network is back. */
    restore() {
      offline = false;
    },
  };
}

export type StatusService = ReturnType<typeof createStatusService>;
