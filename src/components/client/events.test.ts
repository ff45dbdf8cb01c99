import { afterEach, describe, expect, it, vi } from "vitest";
import { type EventStreamState, type SandboxEvent, subscribeSandboxEvents } from "./events.js";

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
