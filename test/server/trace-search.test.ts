// GET /analytics/traces?q=: free-text search over span names, inputs, outputs and status
// messages, against a real service and SQLite file. What a search finds, what it must not (keys
// of JSON, another project's traces), text that is FTS5 syntax, and paging through matches.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addProject, resource, span, startTestServer, type TestServer } from "./helpers.js";

const day = "period_start=2026-11-20&period_end=2026-11-20";
const traceId = (n: number) => `tr_${n.toString(16).padStart(32, "5")}`;

const chat = JSON.stringify([
  { role: "system", content: "You answer questions about orders." },
  { role: "user", content: "Where is my parcel? It was due on Monday." },
]);
const completion = JSON.stringify([
  { role: "assistant", content: "Your parcel is at the Zürich depot." },
]);

describe("searching traces with q", () => {
  let t: TestServer;
  const otherKey = "other-project-key-0123456789";
  beforeAll(async () => {
    t = await startTestServer();
    const spans = [
      // 1: the words in a child span's name only.
      span({ trace_id: traceId(1), name: "support-agent", input: null, output: null }),
      span({
        trace_id: traceId(1),
        parent_span_id: null,
        name: "lookup_warehouse_inventory",
        kind: "tool",
        input: null,
        output: null,
        start_time: "2026-11-20T10:00:00.100Z",
      }),
      // 2: chat messages in and out; their keys (role, content) are not text.
      span({ trace_id: traceId(2), kind: "llm", name: "chat", input: chat, output: completion }),
      // 3: a failed call, its words in the output and status message.
      span({
        trace_id: traceId(3),
        name: "refund-agent",
        input: "refund order 991",
        output: "Refunds are paid within 5 business days",
        status: "error",
        status_message: "payment gateway timed out",
      }),
      // 4..8: five traces for paging, each asking about invoices, a minute apart.
      ...[4, 5, 6, 7, 8].map((n) =>
        span({
          trace_id: traceId(n),
          name: "billing-agent",
          input: `invoice question number ${n}`,
          output: "see your invoices page",
          start_time: `2026-11-20T11:0${n}:00.000Z`,
          end_time: `2026-11-20T11:0${n}:01.000Z`,
        }),
      ),
      // 9: FTS5 syntax as plain text.
      span({
        trace_id: traceId(9),
        name: "syntax",
        input: 'he said "AND" (NEAR me) -x col:value *star ^caret',
        output: "ok",
      }),
    ];
    const stored = await t.call("POST", "/traces", { resource, spans });
    expect(stored.status).toBe(200);
    addProject(t, "other", otherKey);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const search = async (q: string, query = "", key?: string) => {
    const response = await t.call(
      "GET",
      `/analytics/traces?${day}&q=${encodeURIComponent(q)}${query}`,
      undefined,
      key === undefined ? {} : { "x-api-key": key },
    );
    expect(response.status, q).toBe(200);
    return (await response.json()) as {
      traces: { trace_id: string; status: string }[];
      next_cursor: string | null;
    };
  };
  const ids = async (q: string, query = "") =>
    (await search(q, query)).traces.map((trace) => trace.trace_id).sort();

  it("finds a trace by a word of a span's name, input, output or status message", async () => {
    expect(await ids("warehouse")).toEqual([traceId(1)]);
    expect(await ids("lookup_warehouse_inventory")).toEqual([traceId(1)]);
    expect(await ids("parcel monday")).toEqual([traceId(2)]);
    expect(await ids("depot")).toEqual([traceId(2)]);
    expect(await ids("gateway")).toEqual([traceId(3)]);
    expect(await ids("business days")).toEqual([traceId(3)]);
  });

  it("ignores case and accents, matches words by their beginning, and phrases as phrases", async () => {
    expect(await ids("ZURICH")).toEqual([traceId(2)]);
    expect(await ids("refund")).toEqual([traceId(3)]);
    expect(await ids("invoice")).toEqual([4, 5, 6, 7, 8].map(traceId).sort());
    expect(await ids('"paid within"')).toEqual([traceId(3)]);
    expect(await ids('"within paid"')).toEqual([]);
  });

  it("needs every word, in any of the trace's spans", async () => {
    expect(await ids("warehouse support")).toEqual([traceId(1)]);
    expect(await ids("parcel gateway")).toEqual([]);
  });

  it("searches the values of JSON, not its keys", async () => {
    expect(await ids("role")).toEqual([]);
    expect(await ids("content")).toEqual([]);
    expect(await ids("assistant")).toEqual([traceId(2)]);
  });

  it("answers an empty page when nothing matches", async () => {
    const none = await search("zebra");
    expect(none.traces).toEqual([]);
    expect(none.next_cursor).toBeNull();
  });

  it("takes FTS5 syntax as plain text, never failing", async () => {
    for (const q of [
      '"',
      '""',
      '"unbalanced',
      "(",
      ")",
      "AND",
      "OR NOT",
      "NEAR(a b)",
      "col:value",
      "-x",
      "*",
      "star*",
      "^caret",
      "'",
      "a'b",
      "{name body}: x",
      "💥",
      "\\",
      "%_",
      "; DROP TABLE spans; --",
    ]) {
      await search(q);
    }
    expect(await ids('"AND" (NEAR')).toEqual([traceId(9)]);
    expect(await ids("col:value")).toEqual([traceId(9)]);
    expect(await ids("*star")).toEqual([traceId(9)]);
    // Only punctuation: nothing to search for, so nothing matches.
    expect((await search('"" ( ) * -')).traces).toEqual([]);
    // The store is as it was.
    expect((await search("warehouse")).traces).toHaveLength(1);
  });

  it("refuses an empty or overlong q with a 400 that names it, and stores nothing", async () => {
    for (const q of ["", "x".repeat(501)]) {
      const response = await t.call("GET", `/analytics/traces?${day}&q=${q}`);
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toBe("invalid_request");
      expect(body.message).toContain("q");
    }
  });

  it("combines with the other filters", async () => {
    expect(await ids("refund", "&status=error")).toEqual([traceId(3)]);
    expect(await ids("refund", "&status=ok")).toEqual([]);
    expect(await ids("invoice", "&kind=llm")).toEqual([]);
  });

  it("pages through the matches by cursor, each once, in the order asked", async () => {
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const body = await search("invoice", `&limit=2${cursor}`);
      seen.push(...body.traces.map((trace) => trace.trace_id));
      if (body.next_cursor === null) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual([8, 7, 6, 5, 4].map(traceId));
    const ascending = await search("invoice", "&order=asc&limit=10");
    expect(ascending.traces.map((trace) => trace.trace_id)).toEqual([4, 5, 6, 7, 8].map(traceId));
    const byLatency = await search("invoice", "&sort=latency&limit=3");
    expect(byLatency.traces).toHaveLength(3);
    expect(byLatency.next_cursor).not.toBeNull();
  });

  it("finds only the caller's project's traces", async () => {
    const spans = [
      span({
        trace_id: traceId(20),
        name: "other-agent",
        input: "secret warehouse plans",
        output: "parcel",
      }),
    ];
    const stored = await t.call("POST", "/traces", { resource, spans }, { "x-api-key": otherKey });
    expect(stored.status).toBe(200);
    expect(await ids("warehouse")).toEqual([traceId(1)]);
    expect(await ids("secret")).toEqual([]);
    const theirs = await search("warehouse", "", otherKey);
    expect(theirs.traces.map((trace) => trace.trace_id)).toEqual([traceId(20)]);
    expect((await search("depot", "", otherKey)).traces).toEqual([]);
  });

  it("finds a trace as soon as it is stored", async () => {
    const spans = [span({ trace_id: traceId(30), name: "late", input: "quokka sighting" })];
    await t.call("POST", "/traces", { resource, spans });
    expect(await ids("quokka")).toEqual([traceId(30)]);
  });
});

describe("the trace list's tags and models", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("gives each trace every tag and model of its spans, sorted, in the list and the trace", async () => {
    const spans = [
      span({ trace_id: traceId(40), tags: ["zeta", "alpha"] }),
      span({ trace_id: traceId(40), kind: "llm", model: "gpt-4o", tags: ["beta"] }),
      span({ trace_id: traceId(40), kind: "llm", model: "claude-3-5-haiku" }),
      span({ trace_id: traceId(41) }),
    ];
    expect((await t.call("POST", "/traces", { resource, spans })).status).toBe(200);
    const list = await (await t.call("GET", `/analytics/traces?${day}`)).json();
    const rows = new Map(
      list.traces.map((row: { trace_id: string }) => [row.trace_id, row] as const),
    );
    expect(rows.get(traceId(40))).toMatchObject({
      tags: ["alpha", "beta", "zeta"],
      models: ["claude-3-5-haiku", "gpt-4o"],
    });
    expect(rows.get(traceId(41))).toMatchObject({ tags: [], models: [] });
    const trace = await (await t.call("GET", `/traces/${traceId(40)}?payloads=false`)).json();
    expect(trace.tags).toEqual(["alpha", "beta", "zeta"]);
    expect(trace.models).toEqual(["claude-3-5-haiku", "gpt-4o"]);
  });
});
