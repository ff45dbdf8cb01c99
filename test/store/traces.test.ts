// Trace lists on both engines: every filter, each sort in both orders paged by cursor (the same
// cursors on both), the tags and models of each trace, and the free-text search: what it finds,
// what it must not (keys of JSON, another project's traces), and text that is query syntax.
import { expect, it } from "vitest";
import type { ExportedSpan } from "../../src/core/wire/index.js";
import type { Store } from "../../src/server/store/store.js";
import type { TraceCursor, TraceFilters, TraceSort } from "../../src/server/store/trace-list.js";
import { querySyntax, searchSpanFields, searchTraceId } from "../fixtures/trace-search-spans.js";
import { eachEngine } from "./engines.js";
import { batchOf, dayUs, spanOf, traceIdOf } from "./span-fixtures.js";

const project = "prj_traces";
const other = "prj_other";
const period = { fromUs: dayUs("2026-11-20"), toUs: dayUs("2026-11-21") };
const id = searchTraceId;

type Query = Partial<TraceFilters>;

const list = (store: Store, query: Query = {}, projectId = project) =>
  store.traces.list(projectId, { ...period, sort: "time", order: "desc", limit: 50, ...query });

const ids = async (store: Store, query: Query = {}, projectId = project) =>
  (await list(store, query, projectId)).traces.map((trace) => trace.trace_id);

/** Every trace id of a listing, page after page by cursor, with the cursors given. */
async function allPages(store: Store, query: Query) {
  const seen: string[] = [];
  const cursors: Array<TraceCursor | null> = [];
  let cursor: TraceCursor | undefined;
  for (let page = 0; page < 20; page++) {
    const { traces, next } = await list(store, { ...query, cursor });
    seen.push(...traces.map((trace) => trace.trace_id));
    cursors.push(next);
    if (next === null) break;
    cursor = next;
  }
  return { seen, cursors };
}

/** Six traces of a day: times, durations and costs in different orders, some equal. */
function sortedSpans(): ExportedSpan[] {
  const traces = [
    { n: 1, second: 10, ms: 300, cost: 0.3 },
    { n: 2, second: 20, ms: 100, cost: 0.1 },
    { n: 3, second: 20, ms: 300, cost: 0.2 },
    { n: 4, second: 30, ms: 200, cost: 0.3 },
    { n: 5, second: 40, ms: 500, cost: 0 },
    { n: 6, second: 50, ms: 100, cost: 0.7 },
  ];
  return traces.map(({ n, second, ms, cost }) => {
    const start = Date.parse(`2026-11-20T08:00:${second}.000Z`);
    return spanOf({
      trace_id: traceIdOf("7", n),
      kind: "llm",
      cost_usd: cost,
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + ms).toISOString(),
      duration_ms: ms,
      tags: ["sorted"],
    });
  });
}

/** The spans of test/server/trace-search.test.ts, at the store. */
const searchSpans = () => searchSpanFields.map((fields) => spanOf(fields));

eachEngine("traces", (engine) => {
  it("filters by session, tag, version, kind, status, model, name and service", async (context) => {
    const store = await engine.open(context);
    const a = traceIdOf("8", 1);
    const b = traceIdOf("8", 2);
    const c = traceIdOf("8", 3);
    await store.spans.ingestAll(project, [
      batchOf(
        [
          spanOf({ trace_id: a, name: "root-a", session_id: "ses-1", version: "1.0.0" }),
          spanOf({
            trace_id: a,
            parent_span_id: "00000000000000aa",
            kind: "llm",
            model: "gpt-4o",
            tags: ["prod"],
          }),
          spanOf({ trace_id: b, name: "root-b", kind: "chain", status: "error", tags: ["beta"] }),
        ],
        "checkout",
      ),
      batchOf([spanOf({ trace_id: c, name: "root-c", version: "2.0.0" })], "payments"),
    ]);
    await store.spans.ingest(other, batchOf([spanOf({ trace_id: a, session_id: "ses-1" })]));
    expect(await ids(store)).toEqual([c, b, a].sort().reverse());
    expect(await ids(store, { sessionId: "ses-1" })).toEqual([a]);
    expect(await ids(store, { tag: "prod" })).toEqual([a]);
    expect(await ids(store, { version: "2.0.0" })).toEqual([c]);
    expect(await ids(store, { kind: "chain" })).toEqual([b]);
    expect(await ids(store, { status: "error" })).toEqual([b]);
    expect((await ids(store, { status: "ok" })).sort()).toEqual([a, c]);
    expect(await ids(store, { model: "gpt-4o" })).toEqual([a]);
    expect(await ids(store, { name: "root-c" })).toEqual([c]);
    expect(await ids(store, { service: "payments" })).toEqual([c]);
    expect((await ids(store, { service: "checkout" })).sort()).toEqual([a, b]);
    expect(await ids(store, { tag: "prod", status: "error" })).toEqual([]);
    expect(await ids(store, { tag: "missing" })).toEqual([]);
    expect(await ids(store, { fromUs: dayUs("2026-11-21"), toUs: dayUs("2026-11-22") })).toEqual(
      [],
    );
    expect(await ids(store, {}, "prj_nobody")).toEqual([]);
  });

  it("sorts by time, latency and cost both ways, paging each trace once", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(sortedSpans()));
    const orders: Array<[TraceSort, "asc" | "desc", number[]]> = [
      ["time", "desc", [6, 5, 4, 3, 2, 1]],
      ["time", "asc", [1, 2, 3, 4, 5, 6]],
      ["latency", "desc", [5, 3, 1, 4, 6, 2]],
      ["latency", "asc", [2, 6, 4, 1, 3, 5]],
      ["cost", "desc", [6, 4, 1, 3, 2, 5]],
      ["cost", "asc", [5, 2, 3, 1, 4, 6]],
    ];
    for (const [sort, order, expected] of orders) {
      const { seen, cursors } = await allPages(store, { sort, order, limit: 2, tag: "sorted" });
      expect(seen, `${sort} ${order}`).toEqual(expected.map((n) => traceIdOf("7", n)));
      // The cursors are the sort value and id of each page's last trace, on both engines.
      const last = (n: number) => sortedSpans().find((span) => span.trace_id === traceIdOf("7", n));
      expect(cursors.slice(0, 2).map((cursor) => cursor?.traceId)).toEqual(
        [expected[1], expected[3]].map((n) => traceIdOf("7", n as number).slice(3)),
      );
      const value = (n: number) => {
        const span = last(n) as ExportedSpan;
        if (sort === "time") return Date.parse(span.start_time) * 1000;
        if (sort === "latency") return span.duration_ms * 1000;
        return span.cost_usd;
      };
      expect(cursors[0]?.value).toBe(value(expected[1] as number));
      expect(cursors[2]).toBeNull();
    }
    const page = await list(store, { sort: "latency", order: "asc", limit: 1 });
    expect(page.traces[0]).toMatchObject({ duration_ms: 100, cost_usd: 0.1 });
  });

  it("takes a cursor it did not give out without failing", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(sortedSpans()));
    for (const sort of ["time", "latency", "cost"] as const) {
      for (const value of [1.5, -1e300, 1e300, 0.0001]) {
        const page = await list(store, { sort, cursor: { value, traceId: "zz" } });
        expect(Array.isArray(page.traces)).toBe(true);
      }
    }
    // A time between two traces' starts: the page goes on after it, as on SQLite.
    const between = Date.parse("2026-11-20T08:00:35.000Z") * 1000 + 0.5;
    const after = await list(store, { order: "desc", cursor: { value: between, traceId: "" } });
    expect(after.traces.map((trace) => trace.trace_id)).toEqual(
      [4, 3, 2, 1].map((n) => traceIdOf("7", n)),
    );
  });

  it("gives each trace every tag and model of its spans, sorted, in the list and the summary", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(
      project,
      batchOf([
        spanOf({ trace_id: id(40), tags: ["zeta", "alpha", "Zulu", "é"] }),
        spanOf({ trace_id: id(40), kind: "llm", model: "gpt-4o", tags: ["beta"] }),
        spanOf({ trace_id: id(40), kind: "llm", model: "claude-3-5-haiku" }),
        spanOf({ trace_id: id(41) }),
      ]),
    );
    const rows = new Map((await list(store)).traces.map((row) => [row.trace_id, row]));
    const labels = {
      tags: ["Zulu", "alpha", "beta", "zeta", "é"],
      models: ["claude-3-5-haiku", "gpt-4o"],
    };
    expect(rows.get(id(40))).toMatchObject(labels);
    expect(rows.get(id(41))).toMatchObject({ tags: [], models: [] });
    expect(await store.traces.summary(project, id(40).slice(3))).toMatchObject(labels);
    expect(await store.traces.summary(other, id(40).slice(3))).toBeUndefined();
  });

  it("finds a trace by a word of a span's name, input, output or status message", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(searchSpans()));
    const found = async (search: string, query: Query = {}) =>
      (await ids(store, { search, ...query })).sort();
    expect(await found("warehouse")).toEqual([id(1)]);
    expect(await found("lookup_warehouse_inventory")).toEqual([id(1)]);
    expect(await found("parcel monday")).toEqual([id(2)]);
    expect(await found("depot")).toEqual([id(2)]);
    expect(await found("gateway")).toEqual([id(3)]);
    expect(await found("business days")).toEqual([id(3)]);
    // Case and accents, words by their beginning, phrases as phrases.
    expect(await found("ZURICH")).toEqual([id(2)]);
    expect(await found("zür")).toEqual([id(2)]);
    expect(await found("refund")).toEqual([id(3)]);
    expect(await found("invoice")).toEqual([4, 5, 6, 7, 8].map(id));
    expect(await found('"paid within"')).toEqual([id(3)]);
    expect(await found('"within paid"')).toEqual([]);
    expect(await found("nvoice")).toEqual([]);
    // A short word only itself: "on" is in no trace as a word of its own but trace 2's.
    expect(await found("on")).toEqual([id(2)]);
    // Every word, each in any span of the trace.
    expect(await found("warehouse support")).toEqual([id(1)]);
    expect(await found("parcel gateway")).toEqual([]);
    // The values of JSON, not its keys.
    expect(await found("role")).toEqual([]);
    expect(await found("content")).toEqual([]);
    expect(await found("assistant")).toEqual([id(2)]);
    expect(await found("zebra")).toEqual([]);
    // With the other filters.
    expect(await found("refund", { status: "error" })).toEqual([id(3)]);
    expect(await found("refund", { status: "ok" })).toEqual([]);
    expect(await found("invoice", { kind: "llm" })).toEqual([]);
  });

  it("takes query syntax of either engine as plain text, never failing", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(searchSpans()));
    for (const search of querySyntax) await list(store, { search });
    const found = async (search: string) => (await ids(store, { search })).sort();
    expect(await found('"AND" (NEAR')).toEqual([id(9)]);
    expect(await found("col:value")).toEqual([id(9)]);
    expect(await found("*star")).toEqual([id(9)]);
    expect(await found('"" ( ) * -')).toEqual([]);
    expect(await found("warehouse")).toEqual([id(1)]);
  });

  it("pages through the matches of a search by cursor, in the order asked", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(searchSpans()));
    const { seen } = await allPages(store, { search: "invoice", limit: 2 });
    expect(seen).toEqual([8, 7, 6, 5, 4].map(id));
    const ascending = await ids(store, { search: "invoice", order: "asc" });
    expect(ascending).toEqual([4, 5, 6, 7, 8].map(id));
    const byLatency = await list(store, { search: "invoice", sort: "latency", limit: 3 });
    expect(byLatency.traces).toHaveLength(3);
    expect(byLatency.next).not.toBeNull();
  });

  it("finds only the project's own traces, and what was just stored", async (context) => {
    const store = await engine.open(context);
    await store.spans.ingest(project, batchOf(searchSpans()));
    await store.spans.ingest(
      other,
      batchOf([spanOf({ trace_id: id(20), name: "other-agent", input: "secret warehouse plans" })]),
    );
    expect(await ids(store, { search: "warehouse" })).toEqual([id(1)]);
    expect(await ids(store, { search: "secret" })).toEqual([]);
    expect(await ids(store, { search: "warehouse" }, other)).toEqual([id(20)]);
    expect(await ids(store, { search: "depot" }, other)).toEqual([]);
    await store.spans.ingest(
      project,
      batchOf([spanOf({ trace_id: id(30), input: "quokka sighting" })]),
    );
    expect(await ids(store, { search: "quokka" })).toEqual([id(30)]);
  });
});
