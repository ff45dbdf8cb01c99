import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it, vi } from "vitest";
import exportSpan from "../../../test/fixtures/export-span.json" with { type: "json" };
import type { ExportedSpan } from "../../core/wire/index.js";
import { migrate } from "./migrations.js";
import { SearchIndexer } from "./search-indexer.js";
import { SpanStore } from "./span-store.js";
import { listTraces } from "./trace-list.js";

const resource = { service_name: "test", sdk_name: "otel", sdk_version: "1" };
const hex = (n: number) => n.toString(16).padStart(32, "0");

function spanOf(n: number, fields: Partial<ExportedSpan> = {}): ExportedSpan {
  return {
    ...(structuredClone(exportSpan) as ExportedSpan),
    trace_id: `tr_${hex(n)}`,
    span_id: n.toString(16).padStart(16, "0"),
    ...fields,
  };
}

const found = (db: DatabaseSync, projectId: string, q: string) =>
  listTraces(db, projectId, {
    fromUs: 0,
    toUs: Number.MAX_SAFE_INTEGER,
    search: q,
    sort: "time",
    order: "desc",
    limit: 50,
  }).traces.map((trace) => trace.trace_id);

let db: DatabaseSync | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

describe("the trace search index", () => {
  it("indexes spans stored before schema step 12 once the store catches up", () => {
    db = new DatabaseSync(":memory:");
    migrate(db, 11);
    db.exec(`INSERT INTO spans (project_id, trace_id, span_id, name, kind, start_us, end_us,
      duration_us, status, input, output, tags, metadata, attributes, events, service_name,
      received_at) VALUES ('p1', '${hex(1)}', '0000000000000001', 'old-agent', 'agent', 1, 2, 1,
      'ok', '{"question": "kangaroo"}', 'wombat', '[]', '{}', '{}', '[]', 'test', '')`);
    db.exec(`INSERT INTO traces VALUES ('p1', '${hex(1)}', '0000000000000001', 'old-agent',
      'agent', 1, 2, 1, 0, 0, 0, 0, 0, NULL, NULL)`);
    migrate(db);
    const spans = new SpanStore(db);
    expect(found(db, "p1", "kangaroo")).toEqual([]);
    expect(spans.indexForSearch(10)).toBe(1);
    expect(spans.indexForSearch(10)).toBe(0);
    expect(found(db, "p1", "kangaroo")).toEqual([`tr_${hex(1)}`]);
    expect(found(db, "p1", "wombat old")).toEqual([`tr_${hex(1)}`]);
    expect(found(db, "p1", "question")).toEqual([]);
  });

  it("indexes in chunks, each span once, and a trace's spans together", () => {
    db = new DatabaseSync(":memory:");
    migrate(db);
    const spans = new SpanStore(db);
    spans.ingest("p1", {
      resource,
      spans: [1, 2, 3].map((n) => spanOf(n, { input: `platypus ${n}` })),
    });
    expect(spans.indexForSearch(2)).toBe(2);
    expect(spans.indexForSearch(2)).toBe(1);
    expect(spans.indexForSearch(2)).toBe(0);
    expect(found(db, "p1", "platypus").sort()).toEqual([1, 2, 3].map((n) => `tr_${hex(n)}`));
    const docs = (db.prepare("SELECT count(*) AS n FROM span_search_docs").get() as { n: number })
      .n;
    expect(docs).toBe(3);
  });

  it("finds the input that log events filled after the span was indexed", () => {
    db = new DatabaseSync(":memory:");
    migrate(db);
    const spans = new SpanStore(db);
    spans.ingest("p1", { resource, spans: [spanOf(7, { input: null, output: null })] });
    spans.indexForSearch(10);
    expect(found(db, "p1", "echidna")).toEqual([]);
    spans.attachLogEvents("p1", [
      {
        traceId: hex(7),
        spanId: "0000000000000007",
        events: [
          {
            name: "gen_ai.user.message",
            time: "2026-11-20T10:00:00.500Z",
            attributes: { "log.body": JSON.stringify({ content: "an echidna in the garden" }) },
          },
        ],
      },
    ]);
    expect(found(db, "p1", "echidna")).toEqual([`tr_${hex(7)}`]);
    expect(found(db, "p2", "echidna")).toEqual([]);
  });
});

describe("SearchIndexer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("indexes a moment after spans are stored, chunk after chunk until none are left", () => {
    vi.useFakeTimers();
    let waiting = 5;
    const calls: number[] = [];
    const indexer = new SearchIndexer(
      (limit) => {
        const done = Math.min(limit, waiting);
        waiting -= done;
        calls.push(done);
        return done;
      },
      { delayMs: 100, chunk: 2 },
    );
    indexer.stored();
    indexer.stored();
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(100);
    vi.runAllTimers();
    expect(calls).toEqual([2, 2, 1]);
    indexer.close();
    waiting = 3;
    indexer.stored();
    vi.runAllTimers();
    expect(calls).toEqual([2, 2, 1]);
  });

  it("waits for stores to pause, but no longer than its longest wait", () => {
    vi.useFakeTimers();
    let runs = 0;
    const indexer = new SearchIndexer(
      () => {
        runs++;
        return 0;
      },
      { delayMs: 100, maxWaitMs: 1_000 },
    );
    // A store every 50 ms: never a pause of 100 ms, so only the longest wait sets it off.
    for (let step = 0; step < 19; step++) {
      indexer.stored();
      vi.advanceTimersByTime(50);
    }
    expect(runs).toBe(0);
    for (let step = 0; step < 21; step++) {
      indexer.stored();
      vi.advanceTimersByTime(50);
    }
    expect(runs).toBe(1);
    // Then a pause.
    vi.advanceTimersByTime(99);
    expect(runs).toBe(2);
    indexer.close();
  });

  it("keeps going after a failed chunk when spans are stored again", () => {
    vi.useFakeTimers();
    let fail = true;
    let indexed = 0;
    const indexer = new SearchIndexer(
      () => {
        if (fail) throw new Error("disk full");
        indexed++;
        return 0;
      },
      { delayMs: 10 },
    );
    indexer.stored();
    vi.runAllTimers();
    fail = false;
    indexer.stored();
    vi.runAllTimers();
    expect(indexed).toBe(1);
    indexer.close();
  });
});
