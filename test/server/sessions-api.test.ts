import {
  agentSession,
  configure,
  currentSpan,
  flush,
  getSession,
  listSessions,
  observe,
  type Session,
  shutdown,
} from "cairn-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sessionsCommand from "../../src/cli/commands/sessions.js";
import {
  addProject,
  expectRefused,
  resource,
  span,
  startTestServer,
  type TestServer,
} from "./helpers.js";

const otherKey = "other-project-key-sessions-1";
const hex = (prefix: string, index: number) =>
  `${prefix}${index.toString(16).padStart(32 - prefix.length, "0")}`;

describe("GET /sessions and GET /sessions/{session_id}", () => {
  let t: TestServer;
  const asOther = (path: string) => t.call("GET", path, undefined, { "x-api-key": otherKey });

  beforeAll(async () => {
    t = await startTestServer();
    await addProject(t, "other", otherKey);
  });
  afterAll(async () => {
    await t.stop();
  });

  it("lists the sessions the SDK recorded, with their totals, tags, turns and events", async () => {
    configure({ endpoint: t.server.url, apiKey: t.apiKey, exportMode: "immediate" });
    try {
      const model = observe(
        async (prompt: string) => {
          currentSpan()?.setTokenUsage({ prompt_tokens: 10, completion_tokens: 5 });
          return `reply to ${prompt}`;
        },
        { kind: "llm", spanName: "model" },
      );
      const turnOf = (session: Session) =>
        observe(
          async (question: string) => {
            session.addEvent("handoff", { to: "human" });
            return model(question);
          },
          { kind: "agent", spanName: "turn" },
        );
      const session = agentSession({ id: "conv-sdk", tags: ["support"] });
      session.addEvent("user-message", { length: 5 });
      await session.run(() => turnOf(session)("hello"));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await session.run(() => turnOf(session)("again"));
      const other = agentSession({ id: "conv-other", tags: ["sales"] });
      await other.run(() => turnOf(other)("hi"));
      await flush();
    } finally {
      await shutdown();
    }

    const list = await (await t.call("GET", "/sessions")).json();
    expect(list.sessions.map((each: { session_id: string }) => each.session_id)).toEqual([
      "conv-other",
      "conv-sdk",
    ]);
    expect(list.next_cursor).toBeNull();
    expect(list.sessions[1]).toMatchObject({
      session_id: "conv-sdk",
      trace_count: 3,
      span_count: 5,
      error_count: 0,
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
      tags: ["support"],
    });
    expect(Date.parse(list.sessions[1].start_time)).toBeLessThanOrEqual(
      Date.parse(list.sessions[1].end_time),
    );

    const tagged = await (await t.call("GET", "/sessions?tag=sales")).json();
    expect(tagged.sessions.map((each: { session_id: string }) => each.session_id)).toEqual([
      "conv-other",
    ]);

    const detail = await (await t.call("GET", "/sessions/conv-sdk")).json();
    expect(detail).toMatchObject({ session_id: "conv-sdk", trace_count: 3, tags: ["support"] });
    expect(
      detail.traces.map((trace: Record<string, unknown>) => [
        trace.name,
        trace.session_event,
        trace.input,
        trace.output,
      ]),
    ).toEqual([
      ["user-message", true, null, null],
      ["turn", false, "hello", "reply to hello"],
      ["turn", false, "again", "reply to again"],
    ]);
    expect(detail.traces[1]).toMatchObject({
      kind: "agent",
      status: "ok",
      span_count: 2,
      usage: { total_tokens: 15 },
    });
    expect(detail.traces[1].duration_ms).toBeGreaterThanOrEqual(0);
    expect(
      detail.events.map((event: Record<string, unknown>) => [event.name, event.attributes]),
    ).toEqual([
      ["user-message", { length: 5 }],
      ["handoff", { to: "human", "session.id": "conv-sdk" }],
      ["handoff", { to: "human", "session.id": "conv-sdk" }],
    ]);
    expect(detail.events[0].trace_id).toBe(detail.traces[0].trace_id);
    expect(detail.events[1].trace_id).toBe(detail.traces[1].trace_id);
  });

  it("pages sessions by last activity, newest first, each once, within the period", async () => {
    // Session n has a trace at 09:0n and, for odd n, another at 11:0n.
    const spans = [];
    for (let index = 0; index < 5; index++) {
      const times = index % 2 === 1 ? [9, 11] : [9];
      for (const hour of times) {
        spans.push(
          span({
            trace_id: `tr_${hex(`5${hour}`, index)}`,
            start_time: `2026-10-02T${String(hour).padStart(2, "0")}:0${index}:00.000Z`,
            end_time: `2026-10-02T${String(hour).padStart(2, "0")}:0${index}:01.000Z`,
            session_id: `paged-${index}`,
            tags: [index < 2 ? "early" : "late"],
          }),
        );
      }
    }
    spans.push(
      span({
        trace_id: `tr_${hex("6", 1)}`,
        start_time: "2026-09-01T00:00:00.000Z",
        end_time: "2026-09-01T00:00:01.000Z",
        session_id: "last-month",
      }),
    );
    expect((await t.call("POST", "/traces", { resource, spans })).status).toBe(200);

    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const body = await (
        await t.call(
          "GET",
          `/sessions?period_start=2026-10-02&period_end=2026-10-02&limit=2${cursor}`,
        )
      ).json();
      expect(body.period_start).toBe("2026-10-02");
      seen.push(...body.sessions.map((each: { session_id: string }) => each.session_id));
      if (body.next_cursor === null) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(["paged-3", "paged-1", "paged-4", "paged-2", "paged-0"]);

    const late = await (
      await t.call("GET", "/sessions?period_start=2026-10-01&period_end=2026-10-03&tag=late")
    ).json();
    expect(late.sessions.map((each: { session_id: string }) => each.session_id)).toEqual([
      "paged-3",
      "paged-4",
      "paged-2",
    ]);
    const september = await (
      await t.call("GET", "/sessions?period_start=2026-09-01&period_end=2026-09-30")
    ).json();
    expect(september.sessions.map((each: { session_id: string }) => each.session_id)).toEqual([
      "last-month",
    ]);
    const odd = await (await t.call("GET", "/sessions/paged-3")).json();
    expect(odd).toMatchObject({ trace_count: 2, tags: ["late"] });
    expect(odd.start_time).toBe("2026-10-02T09:03:00.000Z");
    expect(odd.end_time).toBe("2026-10-02T11:03:01.000Z");
  });

  it("counts a session's turns apart from its events, with their mean and longest latency", async () => {
    const at = (second: number) => `2026-10-04T10:00:${String(second).padStart(2, "0")}.000Z`;
    const turn = (index: number, from: number, to: number) =>
      span({
        trace_id: `tr_${hex("9", index)}`,
        start_time: at(from),
        end_time: at(to),
        duration_ms: (to - from) * 1000,
        session_id: "timed-chat",
      });
    await t.call("POST", "/traces", {
      resource,
      spans: [
        turn(1, 0, 1),
        // An event recorded outside any call is a trace of its own, not a turn.
        span({
          trace_id: `tr_${hex("9", 2)}`,
          start_time: at(2),
          end_time: at(2),
          duration_ms: 0,
          session_id: "timed-chat",
          name: "user-left",
          attributes: { "cairn.session.event": true },
        }),
        turn(3, 10, 13),
      ],
    });
    const detail = await (await t.call("GET", "/sessions/timed-chat")).json();
    expect(detail).toMatchObject({
      trace_count: 3,
      turn_count: 2,
      latency_ms: { mean: 2000, max: 3000 },
    });
    const list = await (
      await t.call("GET", "/sessions?period_start=2026-10-04&period_end=2026-10-04")
    ).json();
    expect(list.sessions).toEqual([
      expect.objectContaining({
        session_id: "timed-chat",
        turn_count: 2,
        latency_ms: { mean: 2000, max: 3000 },
      }),
    ]);
    // A session of events alone has no turn, and no latency to speak of.
    await t.call("POST", "/traces", {
      resource,
      spans: [
        span({
          trace_id: `tr_${hex("9", 4)}`,
          session_id: "only-events",
          attributes: { "cairn.session.event": true },
        }),
      ],
    });
    const quiet = await (await t.call("GET", "/sessions/only-events")).json();
    expect(quiet).toMatchObject({ turn_count: 0, latency_ms: { mean: null, max: null } });
  });

  it("pages a session's traces oldest first and cuts a long input", async () => {
    const long = "x".repeat(5000);
    const spans = Array.from({ length: 5 }, (_, index) =>
      span({
        trace_id: `tr_${hex("7", index)}`,
        start_time: `2026-10-03T10:00:0${index}.000Z`,
        end_time: `2026-10-03T10:00:0${index}.250Z`,
        duration_ms: 250,
        session_id: "long-chat",
        input: index === 0 ? long : `turn ${index}`,
        status: index === 4 ? "error" : "ok",
      }),
    );
    await t.call("POST", "/traces", { resource, spans });
    const first = await (await t.call("GET", "/sessions/long-chat?limit=3")).json();
    expect(first.trace_count).toBe(5);
    expect(first.error_count).toBe(1);
    expect(first.traces).toHaveLength(3);
    expect(first.traces[0].input).toBe(`${"x".repeat(2000)}…[truncated: 5000 characters in all]`);
    expect(first.traces[0].duration_ms).toBe(250);
    const second = await (
      await t.call("GET", `/sessions/long-chat?limit=3&cursor=${first.next_cursor}`)
    ).json();
    expect(second.next_cursor).toBeNull();
    expect(second.traces.map((trace: { input: string }) => trace.input)).toEqual([
      "turn 3",
      "turn 4",
    ]);
    expect(second.traces[1].status).toBe("error");
    // An id with characters a path must escape.
    await t.call("POST", "/traces", {
      resource,
      spans: [span({ trace_id: `tr_${hex("8", 1)}`, session_id: "user 42/chat?x" })],
    });
    const escaped = await t.call("GET", `/sessions/${encodeURIComponent("user 42/chat?x")}`);
    expect(escaped.status).toBe(200);
    expect((await escaped.json()).session_id).toBe("user 42/chat?x");
  });

  it("answers 400 naming the parameter, and 404 for a session this project does not have", async () => {
    for (const [path, named] of [
      ["/sessions?limit=0", '"limit"'],
      ["/sessions?limit=many", '"limit"'],
      ["/sessions?period_start=2026-02-30", '"period_start"'],
      ["/sessions?period_start=2026-03-02&period_end=2026-03-01", "period_start"],
      ["/sessions?sort=cost", '"sort"'],
      ["/sessions?tag=", '"tag"'],
      ["/sessions?cursor=bm90LWEtY3Vyc29y", "cursor"],
      ["/sessions/conv-sdk?limit=501", '"limit"'],
      ["/sessions/conv-sdk?cursor=e30", "cursor"],
      [`/sessions/${"s".repeat(257)}`, "session_id"],
    ] as const) {
      await expectRefused(t, path, named);
    }
    const missing = await t.call("GET", "/sessions/no-such-session");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
  });

  it("shows another project none of this one's sessions", async () => {
    expect((await asOther("/sessions/conv-sdk")).status).toBe(404);
    const list = await (await asOther("/sessions?period_start=2026-01-01")).json();
    expect(list.sessions).toEqual([]);
    // The same session id in both projects: each sees only its own traces.
    await t.call(
      "POST",
      "/traces",
      { resource, spans: [span({ session_id: "shared-id" })] },
      {
        "x-api-key": otherKey,
      },
    );
    const theirs = await (await asOther("/sessions/shared-id")).json();
    expect(theirs.trace_count).toBe(1);
    expect((await t.call("GET", "/sessions/shared-id")).status).toBe(404);
  });

  it("is read by the SDK's listSessions and getSession, which throw the service's error", async () => {
    const connection = { endpoint: t.server.url, apiKey: t.apiKey };
    const page = await listSessions({
      ...connection,
      period_start: "2026-10-02",
      period_end: "2026-10-02",
      tag: "late",
      limit: 2,
    });
    expect(page.sessions.map((each) => each.session_id)).toEqual(["paged-3", "paged-4"]);
    const next = await listSessions({
      ...connection,
      cursor: page.next_cursor ?? "",
      tag: "late",
      period_start: "2026-10-02",
      period_end: "2026-10-02",
    });
    expect(next.sessions.map((each) => each.session_id)).toEqual(["paged-2"]);
    const session = await getSession("long-chat", { ...connection, limit: 2 });
    expect(session.traces.map((trace) => trace.input?.slice(0, 6))).toEqual(["xxxxxx", "turn 1"]);
    expect(session.next_cursor).not.toBeNull();
    const escaped = await getSession("user 42/chat?x", connection);
    expect(escaped.trace_count).toBe(1);
    const missing = await getSession("no-such-session", connection).catch(
      (error: unknown) => error,
    );
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
    const refused = await listSessions({ ...connection, limit: 0 }).catch(
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: "invalid_request", status: 400 });
  });

  it("is printed by cairn sessions list and cairn sessions show", async () => {
    const connection = { endpoint: t.server.url, apiKey: t.apiKey };
    let listed = "";
    await sessionsCommand.list({ ...connection, limit: 5 }, (text) => {
      listed += text;
    });
    expect(listed).toMatch(/^session\s+first \(UTC\)/);
    expect(listed).toContain("conv-sdk");
    let shown = "";
    await sessionsCommand.show("conv-sdk", connection, (text) => {
      shown += text;
    });
    expect(shown).toContain("session conv-sdk: 3 traces, 5 spans, 0 errors, 30 tokens");
    expect(shown).toContain("agent turn");
    expect(shown).toMatch(/event .* user-message\n/);
  });
});
