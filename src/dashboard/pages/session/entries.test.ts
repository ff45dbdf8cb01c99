import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionTrace } from "../../../core/wire/sessions.js";
import { sessionEntries } from "./entries.js";
import { turnMessages } from "./turn-messages.js";

const trace = (id: string, start: string, sessionEvent = false): SessionTrace => ({
  trace_id: id,
  name: "turn",
  kind: "agent",
  root_span_id: "0000000000000001",
  start_time: start,
  end_time: start,
  duration_ms: 0,
  status: "ok",
  span_count: 1,
  error_count: 0,
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  cost_usd: 0,
  session_id: "s",
  version: null,
  input: null,
  output: null,
  session_event: sessionEvent,
});

const event = (name: string, time: string, traceId: string): SessionEvent => ({
  name,
  time,
  trace_id: traceId,
  span_id: `${name}-span`,
  attributes: {},
});

describe("sessionEntries", () => {
  const traces = [
    trace("tr_event", "2026-01-01T10:00:00.000Z", true),
    trace("tr_1", "2026-01-01T10:00:01.000Z"),
    trace("tr_2", "2026-01-01T10:00:05.000Z"),
  ];
  const events = [
    event("joined", "2026-01-01T10:00:00.000Z", "tr_event"),
    event("handoff", "2026-01-01T10:00:05.500Z", "tr_2"),
    event("left", "2026-01-01T10:00:09.000Z", "tr_later"),
  ];

  it("puts turns and events in time order, numbers turns apart from events, names an event's turn", () => {
    const entries = sessionEntries(traces, events, true);
    expect(
      entries.map((entry) =>
        entry.kind === "turn" ? `turn ${entry.turn}` : `${entry.event.name} ${entry.duringTurn}`,
      ),
    ).toEqual(["joined undefined", "turn 1", "turn 2", "handoff 2", "left undefined"]);
  });

  it("holds back events after the last trace read while more traces are to come", () => {
    const entries = sessionEntries(traces, events, false);
    expect(entries.map((entry) => entry.key)).not.toContain("event:left-span:2");
    expect(entries).toHaveLength(4);
  });
});

describe("turnMessages", () => {
  it("folds the history a model was sent again, and keeps this turn's question and answer", () => {
    const input = JSON.stringify([
      { role: "system", content: "Be brief." },
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
      { role: "user", content: "two" },
    ]);
    const turn = turnMessages(input, "2");
    expect(turn.earlier.map((message) => message.content)).toEqual(["Be brief.", "one", "1"]);
    expect(turn.asked).toEqual([{ role: "user", content: "two" }]);
    expect(turn.answered).toEqual([{ role: "assistant", content: "2" }]);
  });

  it("shows plain text as the user's and the assistant's, and JSON as JSON", () => {
    expect(turnMessages("hi", '{"answer":42}')).toEqual({
      earlier: [],
      asked: [{ role: "user", content: "hi" }],
      answered: [{ role: "assistant", content: '{\n  "answer": 42\n}', json: true }],
    });
    // A history alone, with nothing after its last answer: all of it is the question.
    const history = JSON.stringify([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    expect(turnMessages(history, null).asked).toHaveLength(2);
    expect(turnMessages(null, null)).toEqual({ earlier: [], asked: [], answered: [] });
  });
});
