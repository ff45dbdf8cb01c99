// GET /analytics/traces?q=: free-text search over span names, inputs, outputs and status
// messages, against a real service and SQLite file. What a search finds, what it must not (keys
// of JSON, another project's traces), text that is FTS5 syntax, and paging through matches.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { querySyntax, searchSpanFields, searchTraceId } from "../fixtures/trace-search-spans.js";
import { addProject, resource, span, startTestServer, type TestServer } from "./helpers.js";

const day = "period_start=2026-11-20&period_end=2026-11-20";
const traceId = searchTraceId;

describe("searching traces with q", () => {
  let t: TestServer;
  const otherKey = "other-project-key-0123456789";
  beforeAll(async () => {
    t = await startTestServer();
    const spans = searchSpanFields.map((fields) => span(fields));
    const stored = await t.call("POST", "/traces", { resource, spans });
    expect(stored.status).toBe(200);
    await addProject(t, "other", otherKey);
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
    for (const q of querySyntax) await search(q);
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
