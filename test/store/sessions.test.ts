// Sessions on both engines: the list by last activity with its period, tag and cursor, a
// session's totals, tags and turns, its traces with their root span's input and output cut, and
// the events Session.addEvent recorded; each project seeing only its own.
import { expect, it } from "vitest";
import type { ExportedSpan } from "../../src/core/wire/index.js";
import type { SessionCursor, SessionFilters } from "../../src/server/store/sessions.js";
import type { Store } from "../../src/server/store/store.js";
import { eachEngine } from "./engines.js";
import { batchOf, dayUs, spanOf, traceIdOf } from "./span-fixtures.js";

const project = "prj_sessions";
const other = "prj_other";

const list = (store: Store, query: Partial<SessionFilters>, projectId = project) =>
  store.sessions.list(projectId, {
    fromUs: dayUs("2026-10-01"),
    toUs: dayUs("2026-11-01"),
    limit: 50,
    ...query,
  });

/** Session n has a trace at 09:0n on 2026-10-02 and, for odd n, another at 11:0n. */
function pagedSpans(): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (let index = 0; index < 5; index++) {
    for (const hour of index % 2 === 1 ? [9, 11] : [9]) {
      const at = `2026-10-02T${String(hour).padStart(2, "0")}:0${index}`;
      spans.push(
        spanOf({
          trace_id: traceIdOf(`5${hour}`, index),
          start_time: `${at}:00.000Z`,
          end_time: `${at}:01.000Z`,
          session_id: `paged-${index}`,
          tags: [index < 2 ? "early" : "late"],
        }),
      );
    }
  }
  spans.push(
    spanOf({
      trace_id: traceIdOf("6", 1),
      start_time: "2026-09-01T00:00:00.000Z",
      end_time: "2026-09-01T00:00:01.000Z",
      session_id: "last-month",
    }),
  );
  return spans;
}

eachEngine("sessions", (engine) => {
  it("pages sessions by last activity, newest first, each once, within the period", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(pagedSpans()));
    const october2 = { fromUs: dayUs("2026-10-02"), toUs: dayUs("2026-10-03") };
    const seen: string[] = [];
    const cursors: SessionCursor[] = [];
    let cursor: SessionCursor | undefined;
    for (let page = 0; page < 5; page++) {
      const { sessions, next } = await list(store, { ...october2, limit: 2, cursor });
      seen.push(...sessions.map((each) => each.session_id));
      if (next === null) break;
      cursors.push(next);
      cursor = next;
    }
    expect(seen).toEqual(["paged-3", "paged-1", "paged-4", "paged-2", "paged-0"]);
    expect(cursors).toEqual([
      { value: Date.parse("2026-10-02T11:01:01.000Z") * 1000, sessionId: "paged-1" },
      { value: Date.parse("2026-10-02T09:02:01.000Z") * 1000, sessionId: "paged-2" },
    ]);
    const late = await list(store, { tag: "late" });
    expect(late.sessions.map((each) => each.session_id)).toEqual(["paged-3", "paged-4", "paged-2"]);
    const september = await list(store, { fromUs: dayUs("2026-09-01"), toUs: dayUs("2026-10-01") });
    expect(september.sessions.map((each) => each.session_id)).toEqual(["last-month"]);
    const odd = await store.sessions.summary(project, "paged-3");
    expect(odd).toMatchObject({
      session_id: "paged-3",
      trace_count: 2,
      span_count: 2,
      tags: ["late"],
      start_time: "2026-10-02T09:03:00.000Z",
      end_time: "2026-10-02T11:03:01.000Z",
    });
    // A cursor not given out (a value between two sessions' ends) is taken, not refused.
    const between = await list(store, {
      ...october2,
      cursor: { value: Date.parse("2026-10-02T10:00:00.000Z") * 1000 + 0.5, sessionId: "" },
    });
    expect(between.sessions.map((each) => each.session_id)).toEqual([
      "paged-4",
      "paged-2",
      "paged-0",
    ]);
  });

  it("sums a session's traces, with its tags, turns and their latency", async (context) => {
    const store = await engine.open(context);
    const at = (second: number) => `2026-10-04T10:00:${String(second).padStart(2, "0")}.000Z`;
    const turn = (index: number, from: number, to: number, fields: Partial<ExportedSpan> = {}) =>
      spanOf({
        trace_id: traceIdOf("9", index),
        start_time: at(from),
        end_time: at(to),
        duration_ms: (to - from) * 1000,
        session_id: "timed-chat",
        ...fields,
      });
    await store.spans.ingest(
      project,
      batchOf([
        turn(1, 0, 1, { tags: ["zeta", "Alpha"] }),
        turn(1, 0, 1, {
          parent_span_id: "00000000000000aa",
          kind: "llm",
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          cost_usd: 0.1,
          status: "error",
          tags: ["beta"],
        }),
        // An event recorded outside any call is a trace of its own, not a turn.
        turn(2, 2, 2, { name: "user-left", attributes: { "cairn.session.event": true } }),
        turn(3, 10, 13, {
          kind: "llm",
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          cost_usd: 0.2,
        }),
        turn(4, 20, 27),
      ]),
    );
    const expected = {
      session_id: "timed-chat",
      start_time: at(0),
      end_time: at(27),
      trace_count: 4,
      turn_count: 3,
      span_count: 5,
      error_count: 1,
      usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
      cost_usd: 0.3,
      latency_ms: { mean: 11_000_000 / 3 / 1000, max: 7000 },
      tags: ["Alpha", "beta", "zeta"],
    };
    expect(await store.sessions.summary(project, "timed-chat")).toEqual(expected);
    const listed = await list(store, { fromUs: dayUs("2026-10-04"), toUs: dayUs("2026-10-05") });
    expect(listed).toEqual({ sessions: [expected], next: null });
    // A session of events alone has no turn, and no latency to speak of.
    await store.spans.ingest(
      project,
      batchOf([
        spanOf({
          trace_id: traceIdOf("9", 5),
          session_id: "only-events",
          attributes: { "cairn.session.event": 1 },
        }),
      ]),
    );
    expect(await store.sessions.summary(project, "only-events")).toMatchObject({
      trace_count: 1,
      turn_count: 0,
      latency_ms: { mean: null, max: null },
    });
  });

  it("pages a session's traces oldest first, cutting a long input, marking events", async (context) => {
    const store = await engine.open(context);
    const long = "é".repeat(5000);
    const spans = Array.from({ length: 5 }, (_, index) =>
      spanOf({
        trace_id: traceIdOf("7", index),
        start_time: `2026-10-03T10:00:0${index}.000Z`,
        end_time: `2026-10-03T10:00:0${index}.250Z`,
        duration_ms: 250,
        session_id: "long-chat",
        input: index === 0 ? long : `turn ${index}`,
        output: index === 1 ? null : `reply ${index}`,
        status: index === 4 ? "error" : "ok",
        attributes: index === 2 ? { "cairn.session.event": true } : {},
      }),
    );
    // A child span's input is not its trace's.
    const parent = spans[3] as ExportedSpan;
    spans.push({
      ...parent,
      span_id: "00000000000000cc",
      parent_span_id: parent.span_id,
      input: "child",
    });
    await store.spans.ingest(project, batchOf(spans));
    const first = await store.sessions.traces(project, "long-chat", { limit: 3 });
    expect(first.traces).toHaveLength(3);
    expect(first.traces[0]).toMatchObject({
      trace_id: traceIdOf("7", 0),
      input: `${"é".repeat(2000)}…[truncated: 5000 characters in all]`,
      output: "reply 0",
      duration_ms: 250,
      session_event: false,
    });
    expect(first.traces[1]).toMatchObject({ input: "turn 1", output: null });
    expect(first.traces[2]).toMatchObject({ session_event: true });
    expect(first.next).toEqual({
      value: Date.parse("2026-10-03T10:00:02.000Z") * 1000,
      traceId: traceIdOf("7", 2).slice(3),
    });
    const second = await store.sessions.traces(project, "long-chat", {
      limit: 3,
      cursor: first.next ?? undefined,
    });
    expect(second.next).toBeNull();
    expect(second.traces.map((trace) => [trace.input, trace.status, trace.span_count])).toEqual([
      ["turn 3", "ok", 2],
      ["turn 4", "error", 1],
    ]);
    expect((await store.sessions.traces(project, "no-such", { limit: 3 })).traces).toEqual([]);
  });

  it("gives the events Session.addEvent recorded, oldest first", async (context) => {
    const store = await engine.open(context);
    const event = (name: string, time: string, attributes: Record<string, string | number>) => ({
      name,
      time,
      attributes,
    });
    await store.spans.ingest(
      project,
      batchOf([
        // An event of its own: its span carries it first.
        spanOf({
          trace_id: traceIdOf("4", 1),
          session_id: "conv",
          start_time: "2026-10-05T10:00:00.000Z",
          attributes: { "cairn.session.event": true },
          events: [
            event("user-message", "2026-10-05T10:00:00.000Z", { length: 5 }),
            event("other", "2026-10-05T10:00:00.001Z", {}),
          ],
        }),
        // Events on a call's span: those that name the session.
        spanOf({
          trace_id: traceIdOf("4", 2),
          session_id: "conv",
          start_time: "2026-10-05T10:01:00.000Z",
          events: [
            event("handoff", "2026-10-05T10:01:00.500Z", { to: "human", "session.id": "conv" }),
            event("unrelated", "2026-10-05T10:01:00.100Z", { to: "x" }),
            event("elsewhere", "2026-10-05T10:01:00.200Z", { "session.id": "another" }),
            event("number", "2026-10-05T10:01:00.300Z", { "session.id": 42 }),
          ],
        }),
      ]),
    );
    const events = await store.sessions.events(project, "conv");
    expect(events).toEqual([
      {
        name: "user-message",
        time: "2026-10-05T10:00:00.000Z",
        trace_id: traceIdOf("4", 1),
        span_id: expect.any(String),
        attributes: { length: 5 },
      },
      {
        name: "handoff",
        time: "2026-10-05T10:01:00.500Z",
        trace_id: traceIdOf("4", 2),
        span_id: expect.any(String),
        attributes: { to: "human", "session.id": "conv" },
      },
    ]);
    expect(await store.sessions.events(project, "42")).toEqual([]);
    expect(await store.sessions.events(other, "conv")).toEqual([]);
  });

  it("shows a project none of another's sessions, even of the same id", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(other, batchOf([spanOf({ session_id: "shared-id" })]));
    await store.spans.ingest(
      project,
      batchOf([spanOf({ trace_id: traceIdOf("3", 1), session_id: "user 42/chat?x" })]),
    );
    expect(await store.sessions.summary(project, "shared-id")).toBeUndefined();
    expect(await store.sessions.summary(other, "shared-id")).toMatchObject({ trace_count: 1 });
    expect(await store.sessions.summary(project, "user 42/chat?x")).toMatchObject({
      trace_count: 1,
    });
    const theirs = await list(
      store,
      { fromUs: dayUs("2026-01-01"), toUs: dayUs("2027-01-01") },
      other,
    );
    expect(theirs.sessions.map((each) => each.session_id)).toEqual(["shared-id"]);
    expect((await store.sessions.traces(project, "shared-id", { limit: 5 })).traces).toEqual([]);
  });
});
