// Spans on both engines: idempotent ingest and the trace summary it keeps, spans read back
// whole or without payloads, log events joined to their spans whichever comes first, text
// PostgreSQL cannot hold, and two clients (two instances of the service) writing at once.
import { expect, it } from "vitest";
import type { ExportedSpanEvent } from "../../src/core/wire/index.js";
import type { StoredSpan } from "../../src/server/store/span-rows.js";
import type { Store } from "../../src/server/store/store.js";
import { eachEngine } from "./engines.js";
import { batchOf, spanOf, traceIdOf } from "./span-fixtures.js";

const project = "prj_spans";
const other = "prj_other";
const trace = traceIdOf("a", 1);
const hex = (traceId: string) => traceId.slice(3);

const handoff: ExportedSpanEvent = {
  name: "gen_ai.user.message",
  time: "2026-11-20T10:00:00.500Z",
  // Keys out of any sorted order: jsonb keeps none, and a retried export must still match.
  attributes: { "log.body": '{"content":"hello there"}', zeta: 1, alpha: "a", "event.name": "x" },
};

eachEngine("spans", (engine) => {
  it("stores a batch once: a retried batch is all duplicates and changes nothing", async (context) => {
    const store = await engine.open(context);
    const root = spanOf({ span_id: "1000000000000001", name: "support-agent", session_id: "s-1" });
    const child = spanOf({
      span_id: "1000000000000002",
      parent_span_id: "1000000000000001",
      kind: "llm",
      name: "draft",
      model: "gpt-4o-mini",
      start_time: "2026-11-20T10:00:00.250Z",
      end_time: "2026-11-20T10:00:00.750Z",
      duration_ms: 500,
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cached_tokens: 5 },
      cost_usd: 0.1,
      tags: ["prod", "beta"],
      status: "error",
      status_message: "timed out",
      span_kind: "client",
    });
    const batch = batchOf([child, root]);
    expect(await store.spans.ingest(project, batch)).toEqual({ accepted: 2, duplicates: 0 });
    expect(await store.spans.ingest(project, batch)).toEqual({ accepted: 0, duplicates: 2 });
    const spans = await store.spans.traceSpans(project, hex(trace));
    expect(spans.map((span) => span.name)).toEqual(["support-agent", "draft"]);
    expect(spans[1]).toEqual({ ...child, resource: { service_name: "test", attributes: {} } });
    expect(await store.traces.summary(project, hex(trace))).toMatchObject({
      trace_id: trace,
      name: "support-agent",
      kind: "agent",
      root_span_id: "1000000000000001",
      span_count: 2,
      error_count: 1,
      status: "error",
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      cost_usd: 0.1,
      session_id: "s-1",
      tags: ["beta", "prod"],
      models: ["gpt-4o-mini"],
      start_time: "2026-11-20T10:00:00.000Z",
      end_time: "2026-11-20T10:00:01.000Z",
    });
  });

  it("stores a span twice in one call once, and several batches in one call", async (context) => {
    const store = await engine.open(context);
    const span = spanOf();
    const a = batchOf([span, { ...span, name: "copy" }], "checkout");
    const b = batchOf([spanOf({ parent_span_id: span.span_id })], "payments");
    expect(await store.spans.ingestAll(project, [a, b])).toEqual({ accepted: 2, duplicates: 1 });
    const spans = await store.spans.traceSpans(project, hex(trace));
    expect(spans.map((each) => [each.name, (each as StoredSpan).resource.service_name])).toEqual([
      ["agent", "checkout"],
      ["agent", "payments"],
    ]);
    expect((await store.traces.summary(project, hex(trace)))?.span_count).toBe(2);
  });

  it("reads one span whole, and a trace without its payloads, naming what it left out", async (context) => {
    const store = await engine.open(context);
    const large = "x".repeat(300);
    const span = spanOf({
      input: "the question",
      output: null,
      expected_output: "the answer",
      metadata: { small: 1, large },
      attributes: { "app.small": "s", "app.large": large },
      events: [{ name: "retry", time: "2026-11-20T10:00:00.100Z", attributes: { body: large } }],
      scope: { name: "cairn", version: "1.0.0" },
      links: [{ trace_id: traceIdOf("b", 2), span_id: "00000000000000ff", attributes: {} }],
      span_kind: "client",
    });
    await store.spans.ingest(project, {
      ...batchOf([span]),
      resource: { ...batchOf([]).resource, attributes: { "host.name": "web-1" } },
    });
    const whole = await store.spans.span(project, hex(trace), span.span_id);
    expect(whole).toEqual({
      ...span,
      resource: { service_name: "test", attributes: { "host.name": "web-1" } },
    });
    const [light] = await store.spans.traceSpansWithoutPayloads(project, hex(trace));
    expect(light).toMatchObject({
      input: null,
      output: null,
      expected_output: null,
      metadata: { small: 1 },
      attributes: { "app.small": "s" },
      events: [{ name: "retry", attributes: {} }],
    });
    expect(light?.omitted.sort()).toEqual(
      [
        "input",
        "expected_output",
        "metadata.large",
        "attributes.app.large",
        "events.0.attributes.body",
      ].sort(),
    );
    expect(await store.spans.span(project, hex(trace), "00000000000000ee")).toBeUndefined();
    expect(await store.spans.span(other, hex(trace), span.span_id)).toBeUndefined();
    expect(await store.spans.traceSpans(other, hex(trace))).toEqual([]);
    expect(await store.spans.traceSpans(project, hex(traceIdOf("f", 9)))).toEqual([]);
  });

  it("keeps spans of any day, oldest first, each trace apart from the others", async (context) => {
    const store = await engine.open(context);
    const days = ["1969-12-31", "2026-01-01", "2026-11-20", "2026-11-21", "2199-12-31"];
    const spans = days.map((day, index) =>
      spanOf({
        trace_id: traceIdOf("c", 1),
        span_id: `20000000000000${index}0`,
        parent_span_id: index === 0 ? null : "2000000000000000",
        name: `on ${day}`,
        start_time: `${day}T12:00:00.000Z`,
        end_time: `${day}T12:00:00.001Z`,
        duration_ms: 1,
      }),
    );
    expect(await store.spans.ingest(project, batchOf(spans.slice().reverse()))).toEqual({
      accepted: 5,
      duplicates: 0,
    });
    const read = await store.spans.traceSpans(project, hex(traceIdOf("c", 1)));
    expect(read.map((span) => span.name)).toEqual(days.map((day) => `on ${day}`));
    expect(read.map((span) => span.start_time)).toEqual(days.map((day) => `${day}T12:00:00.000Z`));
    expect(
      await store.spans.span(project, hex(traceIdOf("c", 1)), "2000000000000040"),
    ).toMatchObject({
      name: "on 2199-12-31",
    });
  });

  it("stores text PostgreSQL cannot hold, with U+FFFD in its place there", async (context) => {
    const store = await engine.open(context);
    const odd = "a\u0000b\ud800c";
    const span = spanOf({
      name: odd,
      input: odd,
      session_id: odd,
      tags: [odd],
      attributes: { [odd]: odd, list: [odd] },
      metadata: { note: odd },
      events: [{ name: odd, time: "2026-11-20T10:00:00.000Z", attributes: { body: odd } }],
    });
    expect(await store.spans.ingest(project, batchOf([span]))).toEqual({
      accepted: 1,
      duplicates: 0,
    });
    const [read] = await store.spans.traceSpans(project, hex(trace));
    if (engine.name === "sqlite") {
      expect(read?.attributes).toEqual(span.attributes);
      return;
    }
    // A lone surrogate in a text column is U+FFFD on both engines (UTF-8 has no form for it).
    const text = "a\uFFFDb\uFFFDc";
    expect(read).toMatchObject({
      name: text,
      input: text,
      session_id: text,
      tags: [text],
      attributes: { [text]: text, list: [text] },
      events: [{ name: text, attributes: { body: text } }],
    });
    // Kept as JSON text, the metadata keeps both as they were.
    expect(read?.metadata).toEqual(span.metadata);
    expect((await store.traces.summary(project, hex(trace)))?.tags).toEqual([text]);
    // Looked for with the same text, it is found.
    expect(await store.sessions.summary(project, odd)).toMatchObject({ trace_count: 1 });
  });

  it("joins log events to their span, whether they come before it or after", async (context) => {
    const store = await engine.open(context);
    const early = spanOf({ span_id: "3000000000000001", input: null });
    const late = spanOf({ span_id: "3000000000000002", input: null });
    const logs = (spanId: string) => [{ traceId: hex(trace), spanId, events: [handoff] }];
    // Before its span: kept waiting.
    expect(await store.spans.attachLogEvents(project, logs(early.span_id))).toBe(0);
    await store.spans.ingest(project, batchOf([early]));
    // After it: merged at once; and a retried export adds nothing.
    await store.spans.ingest(project, batchOf([late]));
    expect(await store.spans.attachLogEvents(project, logs(late.span_id))).toBe(1);
    expect(await store.spans.attachLogEvents(project, logs(late.span_id))).toBe(1);
    expect(await store.spans.attachLogEvents(project, logs(early.span_id))).toBe(1);
    for (const spanId of [early.span_id, late.span_id]) {
      const span = await store.spans.span(project, hex(trace), spanId);
      expect(span?.events).toEqual([handoff]);
      expect(span?.input).toBe(JSON.stringify([{ role: "user", content: "hello there" }]));
    }
    // Another project's span of the same ids takes none of them.
    await store.spans.ingest(other, batchOf([{ ...late, span_id: "3000000000000003" }]));
    expect(await store.spans.attachLogEvents(other, logs(late.span_id))).toBe(0);
    expect((await store.spans.span(project, hex(trace), late.span_id))?.events).toHaveLength(1);
  });

  it("counts each span once when two clients send the same batch at once", async (context) => {
    const store = await engine.open(context);
    const second = await engine.openSecondClient();
    for (let round = 0; round < 5; round++) {
      const spans = Array.from({ length: 200 }, (_, index) =>
        spanOf({
          trace_id: traceIdOf("d", round * 10 + (index % 7)),
          kind: "llm",
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          cost_usd: 0.25,
          tags: [`tag-${index % 3}`],
        }),
      );
      const batch = batchOf(spans);
      const results = await Promise.all([
        store.spans.ingest(project, batch),
        second.spans.ingest(project, batch),
      ]);
      expect(results.reduce((sum, result) => sum + result.accepted, 0)).toBe(200);
      expect(results.reduce((sum, result) => sum + result.duplicates, 0)).toBe(200);
      const totals = await Promise.all(
        Array.from({ length: 7 }, (_, index) =>
          store.traces.summary(project, hex(traceIdOf("d", round * 10 + index))),
        ),
      );
      expect(totals.reduce((sum, row) => sum + (row?.span_count ?? 0), 0)).toBe(200);
      expect(totals.reduce((sum, row) => sum + (row?.usage.total_tokens ?? 0), 0)).toBe(1000);
      expect(totals.reduce((sum, row) => sum + (row?.cost_usd ?? 0), 0)).toBe(50);
      expect(totals.every((row) => row?.tags.length === 3)).toBe(true);
    }
  });

  it("sums exactly when many batches add to the same traces at once", async (context) => {
    const store = await engine.open(context);
    const second = await engine.openSecondClient();
    const clients: Store[] = [store, second];
    // Each batch touches every trace, in its own order: writers meet on the same rows.
    const batches = Array.from({ length: 24 }, (_, batch) => {
      const traces = Array.from({ length: 8 }, (_, index) => index);
      if (batch % 2 === 1) traces.reverse();
      return batchOf(
        traces.map((index) =>
          spanOf({
            trace_id: traceIdOf("e", index),
            kind: "llm",
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            cost_usd: 0.5,
            tags: [`batch-${batch % 4}`, "all"],
            model: `model-${batch % 2}`,
            start_time: `2026-11-2${batch % 3}T10:00:00.000Z`,
            end_time: `2026-11-2${batch % 3}T10:00:01.000Z`,
          }),
        ),
        `service-${batch % 3}`,
      );
    });
    const results = await Promise.all(
      batches.map((batch, index) => (clients[index % 2] as Store).spans.ingest(project, batch)),
    );
    expect(results.every((result) => result.accepted === 8)).toBe(true);
    for (let index = 0; index < 8; index++) {
      const summary = await store.traces.summary(project, hex(traceIdOf("e", index)));
      expect(summary).toMatchObject({
        span_count: 24,
        usage: { total_tokens: 48 },
        cost_usd: 12,
        tags: ["all", "batch-0", "batch-1", "batch-2", "batch-3"],
        models: ["model-0", "model-1"],
        start_time: "2026-11-20T10:00:00.000Z",
        end_time: "2026-11-22T10:00:01.000Z",
      });
    }
    const page = await store.traces.list(project, {
      fromUs: Date.parse("2026-11-01T00:00:00Z") * 1000,
      toUs: Date.parse("2026-12-01T00:00:00Z") * 1000,
      service: "service-2",
      sort: "time",
      order: "desc",
      limit: 50,
    });
    expect(page.traces).toHaveLength(8);
  });

  it("gives a span its log events when they arrive, on another client, as it is stored", async (context) => {
    const store = await engine.open(context);
    const second = await engine.openSecondClient();
    for (let round = 0; round < 20; round++) {
      const span = spanOf({ trace_id: traceIdOf("f", round), input: null });
      const logs = [{ traceId: hex(span.trace_id), spanId: span.span_id, events: [handoff] }];
      await Promise.all([
        store.spans.ingest(project, batchOf([span])),
        second.spans.attachLogEvents(project, logs),
      ]);
      const stored = await store.spans.span(project, hex(span.trace_id), span.span_id);
      expect(stored?.events, `round ${round}`).toEqual([handoff]);
    }
  });
});
