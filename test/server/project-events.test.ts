import { connect, type Socket } from "node:net";
import { trace as otelTrace, ROOT_CONTEXT } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectEventLimits } from "../../src/server/events/project-events.js";
import { needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import { addProject, startTestServer, type TestServer } from "./helpers.js";
import {
  eventStreams,
  isReady,
  isTrace,
  listRow,
  newTraceId,
  postSpans,
  type Received,
  traceSpans,
} from "./project-event-helpers.js";

// GET /events against a real service: what each way of storing spans, recording a test run and
// running a sandbox tells the project's streams, resuming, the caps, and who may read it.

const { follow, opened } = eventStreams();

describe.each([
  ["on worker threads", 2],
  ["on the main thread", 0],
])("a trace posted with POST /traces, stored %s", (_where, ingestWorkers) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ ingestWorkers });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("is one trace event per batch, with the fields of its row in the trace list", async () => {
    const stream = await opened(t);
    const traceId = newTraceId();
    await postSpans(t, traceSpans(traceId, 500));
    const event = await stream.until(isTrace(traceId), "the trace's event");
    expect(event.data).toEqual(await listRow(t, traceId));
    expect(event.data.span_count).toBe(500);
    // Whatever comes after another trace's event, the first trace had one event.
    const later = newTraceId();
    await postSpans(t, traceSpans(later, 1));
    await stream.until(isTrace(later), "the later trace's event");
    expect(stream.events.filter(isTrace(traceId))).toHaveLength(1);
    expect(await stream.status).toBe(200);
  });

  it("tells again of a trace that grew, with its row as it is then", async () => {
    const stream = await opened(t);
    const traceId = newTraceId();
    const [root, ...children] = traceSpans(traceId, 3);
    await postSpans(t, [root]);
    await stream.until(isTrace(traceId), "the trace's first event");
    await postSpans(t, children);
    await stream.until(
      (event) => isTrace(traceId)(event) && event.data.span_count === 3,
      "the grown trace's event",
    );
    expect(stream.events.filter(isTrace(traceId)).at(-1)?.data).toEqual(await listRow(t, traceId));
  });
});

describe("GET /events", () => {
  let t: TestServer;
  const otherKey = "other-project-key-0123456789";
  beforeAll(async () => {
    t = await startTestServer();
    await addProject(t, "other", otherKey);
  });
  afterAll(async () => {
    await t.stop();
  });

  it("tells of a trace exported with OTLP, as its list row", async () => {
    const stream = await opened(t);
    const exporter = new OTLPTraceExporter({
      url: `${t.server.url}/v1/traces`,
      headers: { "x-api-key": t.apiKey },
    });
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tracer = provider.getTracer("otel-app");
    const root = tracer.startSpan("otel root", {
      attributes: { "openinference.span.kind": "AGENT" },
    });
    tracer.startSpan("child", {}, otelTrace.setSpan(ROOT_CONTEXT, root)).end();
    root.end();
    await provider.forceFlush();
    await provider.shutdown();
    const traceId = `tr_${root.spanContext().traceId}`;
    const event = await stream.until(isTrace(traceId), "the OTLP trace's event");
    expect(event.data).toEqual(await listRow(t, traceId));
    expect(event.data).toMatchObject({ name: "otel root", kind: "agent", span_count: 2 });
  });

  it("tells of a test run recorded, as its row in the run list", async () => {
    const stream = await opened(t);
    const response = await t.call("POST", "/testing/runs", {
      name: "nightly",
      results: [
        {
          query: "2+2",
          output: "4",
          scores: { correctness: { score: 1, reason: "" } },
          latency_ms: 5,
        },
      ],
    });
    expect(response.status).toBe(201);
    const { run_id: runId } = (await response.json()) as { run_id: string };
    const event = await stream.until(
      (each) => each.event === "test-run" && each.data.run_id === runId,
      "the run's event",
    );
    const { runs } = (await (await t.call("GET", "/testing/runs")).json()) as {
      runs: Array<{ run_id: string }>;
    };
    expect(event.data).toEqual(runs.find((run) => run.run_id === runId));
    expect(event.data.summary.pass_rate).toBe(1);
  });

  it("never sends one project's events to another project's stream", async () => {
    const mine = follow(t);
    const theirs = follow(t, { key: otherKey });
    await mine.until(isReady, "ready");
    const ready = await theirs.until(isReady, "ready");
    const secret = newTraceId();
    await postSpans(t, traceSpans(secret, 1, "project A's secret"));
    await mine.until(isTrace(secret), "project A's trace");
    // Project B's own trace comes after A's was sent: had B's stream been sent A's, it came first.
    const theirTrace = newTraceId();
    await postSpans(t, traceSpans(theirTrace, 1), otherKey);
    await theirs.until(isTrace(theirTrace), "project B's trace");
    expect(mine.events.some(isTrace(theirTrace))).toBe(false);
    expect(JSON.stringify(theirs.events)).not.toContain(secret);
    // Resuming from an id of project A's stream replays nothing of A to project B.
    const lastOfMine = mine.events.filter(isTrace(secret))[0]?.id as string;
    const replay = await opened(t, { key: otherKey, lastEventId: lastOfMine });
    expect(JSON.stringify(replay.events)).not.toContain(secret);
    expect(ready.data).toEqual({ resumed: false });
  });

  it("resumes after Last-Event-ID with what was missed, without loss or duplicates", async () => {
    const first = await opened(t);
    const before = [newTraceId(), newTraceId()];
    await postSpans(
      t,
      before.flatMap((id) => traceSpans(id, 1)),
    );
    for (const id of before) await first.until(isTrace(id), "a trace before the break");
    const lastSeen = first.events.at(-1)?.id as string;
    await first.close();
    const missed = [newTraceId(), newTraceId(), newTraceId()];
    for (const id of missed) await postSpans(t, traceSpans(id, 1));
    // A stream that sees them too, so that they have been sent before the reconnect.
    const witness = await opened(t);
    const after = newTraceId();
    await postSpans(t, traceSpans(after, 1));
    await witness.until(isTrace(after), "the trace after the break");
    for (const resume of [
      follow(t, { lastEventId: lastSeen }),
      // EventSource polyfills that cannot send the header put it in the query.
      follow(t, { path: `/events?lastEventId=${lastSeen}` }),
    ]) {
      const ready = await resume.until(isReady, "ready");
      expect(ready.data).toEqual({ resumed: true });
      const traces = resume.of("trace").map((event) => event.data.trace_id);
      expect(traces).toEqual([...missed, after]);
      const ids = resume.events.filter((event) => event.event !== "ready").map((event) => event.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(Number(ids[0])).toBe(Number(lastSeen) + 1);
    }
  });

  it("replays what was missed even when it is more than a client may leave unread", async () => {
    const first = await opened(t);
    const lastSeen = first.events.at(-1)?.id as string;
    await first.close();
    const missed = Array.from({ length: 30 }, newTraceId);
    const witness = await opened(t);
    await postSpans(
      t,
      missed.flatMap((id) => traceSpans(id, 1, "m".repeat(1000))),
    );
    for (const id of missed) await witness.until(isTrace(id), "a missed trace");
    const saved = projectEventLimits.unreadLimitBytes;
    projectEventLimits.unreadLimitBytes = 8 * 1024;
    try {
      const resumed = await opened(t, { lastEventId: lastSeen });
      expect(resumed.of("trace").map((event) => event.data.trace_id)).toEqual(missed);
      // It stays open for what comes next.
      const next = newTraceId();
      await postSpans(t, traceSpans(next, 1));
      await resumed.until(isTrace(next), "the next trace");
    } finally {
      projectEventLimits.unreadLimitBytes = saved;
    }
  });

  it("refuses a Last-Event-ID that is not one of its ids, and unknown query parameters", async () => {
    for (const [headers, path] of [
      [{ "last-event-id": "12; DROP" }, "/events"],
      [{}, "/events?lastEventId=-1"],
      [{}, "/events?since=5"],
    ] as const) {
      const response = await t.call("GET", path, undefined, headers);
      expect(response.status, path).toBe(400);
      const body = await response.json();
      expect(body.error).toBe("invalid_request");
      expect(body.message).toMatch(/Last-Event-ID|since/);
    }
  });

  it("answers an id it no longer keeps, or never gave, with resync first", async () => {
    const stream = follow(t);
    const ready = await stream.until(isReady, "ready");
    const current = Number(ready.id);
    for (const lastEventId of [String(current + 1000), "1"]) {
      const resumed = await opened(t, { lastEventId });
      expect(resumed.events.map((event) => event.event)).toEqual(["resync", "ready"]);
      expect(resumed.events[0]?.data.reason).toBe("history-lost");
      expect(resumed.events[1]?.data).toEqual({ resumed: false });
      // The id to resume from next is the stream's own.
      expect(resumed.events[1]?.id).toBe(ready.id);
    }
  });

  it("says how soon to reconnect, and keeps a quiet stream alive with comments", async () => {
    const saved = projectEventLimits.heartbeatMs;
    projectEventLimits.heartbeatMs = 20;
    const abort = new AbortController();
    try {
      const response = await fetch(`${t.server.url}/events`, {
        headers: { "x-api-key": t.apiKey },
        signal: abort.signal,
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes(": keep-alive")) {
        const { value } = await reader.read();
        text += decoder.decode(value, { stream: true });
      }
      expect(text.startsWith("retry: 1000\n\n")).toBe(true);
    } finally {
      projectEventLimits.heartbeatMs = saved;
      abort.abort();
    }
  });

  it("is in the API reference, with its events, its resume header and its refusals", async () => {
    const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
    const route = document.paths["/events"].get;
    expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(["200", "400", "403"]));
    const events = route.responses["200"].content["text/event-stream"].schema.properties;
    expect(Object.keys(events)).toEqual(["trace", "test-run", "sandbox", "resync", "ready"]);
    const parameters = route.parameters.map((each: { name: string }) => each.name);
    expect(parameters).toEqual(expect.arrayContaining(["last-event-id", "lastEventId"]));
  });

  it("refuses to start a stream without a key, or with a wrong one", async () => {
    expect((await fetch(`${t.server.url}/events`)).status).toBe(401);
    const wrong = await fetch(`${t.server.url}/events`, {
      headers: { "x-api-key": "not-a-key-of-any-project" },
    });
    expect(wrong.status).toBe(401);
  });
});

describe("GET /events with a small ring and a flood of traces", () => {
  let t: TestServer;
  const saved = { ...projectEventLimits };
  beforeAll(async () => {
    projectEventLimits.ringSize = 8;
    t = await startTestServer({ ingestWorkers: 2 });
  });
  afterAll(async () => {
    Object.assign(projectEventLimits, saved);
    await t.stop();
  });

  it("answers an id that fell out of the ring with resync, then the live events", async () => {
    const first = await opened(t);
    const early = newTraceId();
    await postSpans(t, traceSpans(early, 1));
    const seen = await first.until(isTrace(early), "the early trace");
    await first.close();
    const later = Array.from({ length: 12 }, newTraceId);
    const witness = await opened(t);
    await postSpans(
      t,
      later.flatMap((id) => traceSpans(id, 1)),
    );
    for (const id of later) await witness.until(isTrace(id), "a later trace");
    const resumed = await opened(t, { lastEventId: seen.id as string });
    expect(resumed.events.map((event) => event.event)).toEqual(["resync", "ready"]);
    const live = newTraceId();
    await postSpans(t, traceSpans(live, 1));
    await resumed.until(isTrace(live), "a live trace after the resync");
  });

  it("sends a flood of 5,000 traces as a capped number of events and a resync", async () => {
    const stream = await opened(t);
    const started = performance.now();
    const ids = Array.from({ length: 5000 }, newTraceId);
    for (let start = 0; start < ids.length; start += 500) {
      await postSpans(
        t,
        ids.slice(start, start + 500).flatMap((id) => traceSpans(id, 1)),
      );
    }
    const flood = new Set(ids);
    const told = () =>
      stream.of("trace").filter((event) => flood.has(event.data.trace_id)).length +
      stream.of("resync").reduce((sum, event) => sum + (event.data.dropped?.trace ?? 0), 0);
    // Every trace is either told of or counted in a resync.
    await stream.until(() => told() === ids.length, "every trace told of or counted");
    const seconds = (performance.now() - started) / 1000;
    const traceEvents = stream.of("trace").length;
    expect(traceEvents).toBeLessThanOrEqual(
      projectEventLimits.burst + Math.ceil(projectEventLimits.eventsPerSecond * (seconds + 1)),
    );
    expect(stream.of("resync").length).toBeGreaterThan(0);
    expect(stream.of("resync")[0]?.data.reason).toBe("rate-limited");
    expect(stream.events.length).toBeLessThan(500);
  });
});

/**
 * GET /events on a raw socket that stops reading once the stream is open (its `ready` came):
 * the client that went away without closing. `closed` resolves with the bytes it had read.
 */
function unreadStream(t: TestServer): Promise<{ socket: Socket; closed: Promise<number> }> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = 0;
    let head = "";
    const closed = new Promise<number>((done) => socket.on("close", () => done(received)));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      received += chunk.byteLength;
      if (head.includes("event: ready")) return;
      head += chunk.toString("latin1");
      if (head.includes("event: ready")) {
        socket.pause();
        resolve({ socket, closed });
      }
    });
    void closed.then(() => reject(new Error(`the stream ended before ready: ${head}`)));
    socket.write(`GET /events HTTP/1.1\r\nhost: ${url.host}\r\nx-api-key: ${t.apiKey}\r\n\r\n`);
  });
}

describe("a stream whose client does not read", () => {
  let t: TestServer;
  const saved = { ...projectEventLimits };
  beforeAll(async () => {
    // Every change an event, so that the flood is big.
    Object.assign(projectEventLimits, { eventsPerSecond: 1_000_000, burst: 1_000_000 });
    t = await startTestServer({ ingestWorkers: 0 });
  });
  afterAll(async () => {
    Object.assign(projectEventLimits, saved);
    await t.stop();
  });

  it("is cut off at the cap, while a stream that reads gets every event", async () => {
    // The cap is read as a stream opens: the reading one may hold a whole flood at once.
    projectEventLimits.unreadLimitBytes = 64 * 1024 * 1024;
    const reader = await opened(t);
    projectEventLimits.unreadLimitBytes = 256 * 1024;
    const stuck = await unreadStream(t);
    const name = "n".repeat(1000);
    const ids = Array.from({ length: 4000 }, newTraceId);
    for (let start = 0; start < ids.length; start += 1000) {
      await postSpans(
        t,
        ids.slice(start, start + 1000).flatMap((id) => traceSpans(id, 1, name)),
      );
    }
    for (const id of ids) await reader.until(isTrace(id), "each trace of the flood");
    const sent = reader
      .of("trace")
      .reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
    expect(sent).toBeGreaterThan(4 * 1024 * 1024);
    // The server let go of it (a stream left open would never end): what it had left to read
    // ends, far short of what was sent.
    stuck.socket.resume();
    const received = await stuck.closed;
    expect(received).toBeLessThan(sent / 2);
  });
});

describe("shutting down with streams open", () => {
  it("cuts every stream off, a reading one and one never read, and does not wait", async () => {
    const t = await startTestServer();
    const reading = await opened(t);
    const stuck = await unreadStream(t);
    await postSpans(t, traceSpans(newTraceId(), 1));
    await t.stop();
    await reading.ended;
    stuck.socket.resume();
    await stuck.closed;
    expect(reading.of("ready")).toHaveLength(1);
  });
});

describe("GET /events and sandboxes", () => {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startSandboxServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("tells of a sandbox created, resized and killed, as its record in the list", async (context) => {
    needSandboxes(context, t);
    const server = t;
    const stream = await opened(server);
    const created = await server.call("POST", "/api/sandboxes", { tags: { team: "events" } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const isSandbox = (status: string) => (event: Received) =>
      event.event === "sandbox" && event.data.id === id && event.data.status === status;
    await stream.until(isSandbox("running"), "the sandbox running");
    const { sandboxes } = (await (await server.call("GET", "/api/sandboxes")).json()) as {
      sandboxes: Array<{ id: string }>;
    };
    expect(stream.events.find(isSandbox("running"))?.data).toEqual(
      sandboxes.find((each) => each.id === id),
    );
    expect(stream.events.find(isSandbox("running"))?.data.tags).toEqual({ team: "events" });
    const resized = await server.call("PATCH", `/api/sandboxes/${id}`, { cpuCount: 2 });
    expect(resized.status).toBe(200);
    await stream.until(
      (event) => isSandbox("running")(event) && event.data.cpuCount === 2,
      "the sandbox resized",
    );
    expect((await server.call("DELETE", `/api/sandboxes/${id}`)).status).toBe(200);
    await stream.until(isSandbox("stopped"), "the sandbox stopped");
  });

  it("refuses a sandbox token with 403", async (context) => {
    needSandboxes(context, t);
    const server = t;
    const created = await server.call("POST", "/api/sandboxes", {});
    const { id } = (await created.json()) as { id: string };
    try {
      const tokenAnswer = await server.call("POST", `/api/sandboxes/${id}/tokens`, {
        scopes: ["read", "write", "exec"],
      });
      expect(tokenAnswer.status).toBe(201);
      const { token } = (await tokenAnswer.json()) as { token: string };
      for (const headers of [{ authorization: `Bearer ${token}` }, { "x-api-key": token }]) {
        const refused = await fetch(`${server.server.url}/events`, { headers });
        expect(refused.status).toBe(403);
        expect((await refused.json()).error).toBe("forbidden");
      }
    } finally {
      await server.call("DELETE", `/api/sandboxes/${id}`);
    }
  });
});
