import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type EventStreamState,
  eventStreamTimeouts,
  type SandboxEvent,
  subscribeSandboxEvents,
} from "./events.js";

afterEach(() => {
  vi.useRealTimers();
});

const state = (id: number, status: string) =>
  `id: ${id}\nevent: state\ndata: ${JSON.stringify({ sandbox: { id: "sbx_1", status } })}\n\n`;

/** A service whose n-th answer to GET …/events is the n-th of `answers` (a body, or a hang). */
function service(answers: Array<string | "hang">) {
  const requests: Array<{ lastEventId: string | null }> = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    requests.push({ lastEventId: new Headers(init?.headers).get("last-event-id") });
    const answer = answers.shift() ?? "hang";
    if (answer === "hang") {
      return await new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener("abort", () =>
          reject(new DOMException("aborted", "AbortError")),
        ),
      );
    }
    return new Response(answer, { headers: { "content-type": "text/event-stream" } });
  };
  return { requests, connection: { endpoint: "http://cairn.test", token: "t", fetch } };
}

function follow(connection: ReturnType<typeof service>["connection"]) {
  const events: SandboxEvent[] = [];
  const states: EventStreamState[] = [];
  const stop = subscribeSandboxEvents(connection, "sbx_1", {
    onEvent: (event) => events.push(event),
    onStreamState: (stream) => states.push(stream),
  });
  return { events, states, stop };
}

describe("subscribeSandboxEvents", () => {
  it("resumes with Last-Event-ID after a stream ends cleanly while the sandbox runs", async () => {
    const { requests, connection } = service([state(1, "running"), state(2, "running")]);
    const { states, stop } = follow(connection);
    await vi.waitFor(() => expect(requests).toHaveLength(2), { timeout: 3000 });
    stop();
    expect(requests[1]?.lastEventId).toBe("1");
    expect(states).toContain("reconnecting");
  });

  it("ends once the sandbox has, and asks no more", async () => {
    const { requests, connection } = service([state(1, "running") + state(2, "stopped")]);
    const { states } = follow(connection);
    await vi.waitFor(() => expect(states.at(-1)).toBe("closed"));
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(requests).toHaveLength(1);
    expect(states).not.toContain("reconnecting");
  });

  it("counts an answer that never comes as a drop, and tries again", async () => {
    vi.useFakeTimers();
    const { requests, connection } = service(["hang", state(1, "running")]);
    const { states, stop } = follow(connection);
    await vi.advanceTimersByTimeAsync(41_000);
    expect(states).toContain("reconnecting");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    stop();
  });
});

describe("subscribeSandboxEvents shared by subscribers", () => {
  it("opens one stream for two subscribers of a sandbox, replays its state to the later one, and closes it with the last", async () => {
    const bodies: Array<ReadableStreamDefaultController<Uint8Array>> = [];
    const signals: AbortSignal[] = [];
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      if (init?.signal) signals.push(init.signal);
      const body = new ReadableStream<Uint8Array>({ start: (c) => void bodies.push(c) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const connection = { endpoint: "http://cairn.test", token: "t", fetch };
    const first = follow(connection);
    await vi.waitFor(() => expect(bodies).toHaveLength(1));
    bodies[0]?.enqueue(new TextEncoder().encode(state(1, "running")));
    await vi.waitFor(() => expect(first.events).toHaveLength(1));

    const second = follow(connection);
    expect(second.events).toEqual(first.events);
    expect(second.states.at(-1)).toBe("open");
    bodies[0]?.enqueue(new TextEncoder().encode(state(2, "running")));
    await vi.waitFor(() => expect(second.events).toHaveLength(2));
    expect(first.events).toHaveLength(2);
    expect(signals).toHaveLength(1);

    first.stop();
    expect(signals[0]?.aborted).toBe(false);
    second.stop();
    expect(signals[0]?.aborted).toBe(true);

    // Another token, another sandbox or another fetch: a stream of its own.
    const third = follow({ ...connection, token: "u" });
    await vi.waitFor(() => expect(signals).toHaveLength(2));
    third.stop();
  });
});

describe("subscribeSandboxEvents timeouts", () => {
  it("drops an answer that takes over answerMs, and a stream silent for quietMs (a keep-alive comment counts)", async () => {
    vi.useFakeTimers();
    const bodies: Array<ReadableStreamDefaultController<Uint8Array>> = [];
    const signals: AbortSignal[] = [];
    let hang = true;
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      const signal = init?.signal as AbortSignal;
      signals.push(signal);
      if (hang) {
        hang = false;
        return await new Promise<Response>((_, reject) =>
          signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
        );
      }
      const body = new ReadableStream<Uint8Array>({ start: (c) => void bodies.push(c) });
      signal.addEventListener("abort", () => bodies.at(-1)?.error(signal.reason));
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const { states, stop } = follow({ endpoint: "http://cairn.test", token: "slow", fetch });
    await vi.advanceTimersByTimeAsync(19_000);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(signals[0]?.aborted).toBe(true);
    expect(states).toContain("reconnecting");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(states.at(-1)).toBe("open");
    // Keep-alive comments every 15 s hold the stream a long while.
    for (let i = 0; i < 8; i++) {
      bodies[0]?.enqueue(new TextEncoder().encode(": keep-alive\n\n"));
      await vi.advanceTimersByTimeAsync(15_000);
    }
    expect(signals[1]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(eventStreamTimeouts.quietMs - 15_000 + 1);
    expect(signals[1]?.aborted).toBe(true);
    expect(states.at(-1)).toBe("reconnecting");
    stop();
  });

  it("takes its timings from eventStreamTimeouts", async () => {
    vi.useFakeTimers();
    const saved = { ...eventStreamTimeouts };
    eventStreamTimeouts.answerMs = 100;
    try {
      const { requests, connection } = service(["hang", state(1, "running")]);
      const { states, stop } = follow({ ...connection, token: "quick" });
      await vi.advanceTimersByTimeAsync(150);
      expect(states).toContain("reconnecting");
      await vi.advanceTimersByTimeAsync(600);
      expect(requests).toHaveLength(2);
      stop();
    } finally {
      Object.assign(eventStreamTimeouts, saved);
    }
  });

  it("closes on a 4xx, and tries a 503 or a 429 again", async () => {
    const answers = [503, 429, 401];
    const fetch: typeof globalThis.fetch = async () =>
      Response.json({ error: "e", message: "m" }, { status: answers.shift() ?? 401 });
    const { states } = follow({ endpoint: "http://cairn.test", token: "refused", fetch });
    await vi.waitFor(() => expect(states.at(-1)).toBe("closed"), { timeout: 3000 });
    expect(states.filter((s) => s === "reconnecting")).toHaveLength(2);
    expect(answers).toEqual([]);
  });
});
