import type { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import exportSpan from "../../../test/fixtures/export-span.json" with { type: "json" };
import type { ExportedSpan } from "../../core/wire/index.js";
import { openDatabase, transaction } from "./database.js";
import { LogEventJoin, pendingLogEventMaxAgeMs } from "./span-log-events.js";
import { SpanStore } from "./span-store.js";

const traceId = "a".repeat(32);
const resource = { service_name: "test", sdk_name: "otel", sdk_version: "1" };
const event = (text: string) => ({
  name: "gen_ai.user.message",
  time: "2026-11-20T10:00:00.500Z",
  attributes: { "log.body": JSON.stringify({ content: text }) },
});

let db: DatabaseSync;
let spans: SpanStore;
beforeEach(() => {
  db = openDatabase(":memory:");
  spans = new SpanStore(db);
});
afterEach(() => db.close());

function storeSpan(spanId: string, input: string | null = null) {
  const span = { ...structuredClone(exportSpan), span_id: spanId, input, output: null };
  spans.ingest("p1", { resource, spans: [span as ExportedSpan] });
}

const pending = () =>
  (db.prepare("SELECT count(*) AS n FROM pending_log_events").get() as { n: number }).n;

describe("log events waiting for their span", () => {
  it("wait for the span, then fill its input when it is stored, and are gone", () => {
    const waiting = spans.attachLogEvents("p1", [
      { traceId, spanId: "0000000000000001", events: [event("Q")] },
    ]);
    expect(waiting).toBe(0);
    expect(pending()).toBe(1);
    storeSpan("0000000000000001");
    const [span] = spans.traceSpans("p1", traceId);
    expect(JSON.parse(span?.input ?? "")).toEqual([{ role: "user", content: "Q" }]);
    expect(span?.events).toEqual([event("Q")]);
    expect(pending()).toBe(0);
  });

  it("belong to one project: another project's span with the same ids gets nothing", () => {
    spans.attachLogEvents("p2", [{ traceId, spanId: "0000000000000001", events: [event("Q")] }]);
    storeSpan("0000000000000001");
    expect(spans.traceSpans("p1", traceId)[0]?.events).toEqual([]);
    expect(pending()).toBe(1);
  });

  it("are dropped after an hour", () => {
    const join = new LogEventJoin(db);
    const now = Date.now();
    const attach = (spanId: string, at: number) =>
      transaction(db, () => join.attach("p1", [{ traceId, spanId, events: [event(spanId)] }], at));
    attach("0000000000000001", now - pendingLogEventMaxAgeMs - 1);
    attach("0000000000000002", now);
    expect(pending()).toBe(1);
    storeSpan("0000000000000001");
    expect(spans.traceSpans("p1", traceId)[0]?.input).toBeNull();
  });

  it("are kept up to a most, the oldest dropped first", () => {
    const join = new LogEventJoin(db, 2);
    for (const spanId of ["0000000000000001", "0000000000000002", "0000000000000003"]) {
      transaction(db, () =>
        join.attach("p1", [{ traceId, spanId, events: [event(spanId)] }], Date.now()),
      );
    }
    const left = db.prepare("SELECT span_id FROM pending_log_events ORDER BY id").all();
    expect(left.map((row) => row.span_id)).toEqual(["0000000000000002", "0000000000000003"]);
  });
});
