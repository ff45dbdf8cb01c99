// What one tenant can send that the API stores and then cannot give back: span trees nested
// deeper than JSON.stringify follows, parents that loop, metadata nested thousands deep, session
// ids longer than a URL of the session API may carry, reports and traces larger than a string
// holds, and test-run costs that sum past a number. Each was a 500, a span missing from its
// trace, a session whose page and list could not be read, or a null where a number belongs.
// Runs on both stores.

import { afterEach, describe, expect, it } from "vitest";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const traceId = `tr_${"5".repeat(32)}`;
const period = "period_start=2026-11-19&period_end=2026-11-21";
const spanIdOf = (index: number) => (index + 1).toString(16).padStart(16, "0");

interface TreeNode {
  span_id: string;
  children: TreeNode[];
}

/** Every span of the tree, with the depth of the deepest, walked without recursion. */
function walk(roots: TreeNode[]): { spanIds: string[]; depth: number } {
  const spanIds: string[] = [];
  let depth = 0;
  const pending = roots.map((node) => ({ node, level: 1 }));
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    spanIds.push(item.node.span_id);
    depth = Math.max(depth, item.level);
    for (const child of item.node.children) pending.push({ node: child, level: item.level + 1 });
  }
  return { spanIds: spanIds.sort(), depth };
}

async function treeOf(server: TestServer, query = "") {
  const answer = await server.call("GET", `/traces/${traceId}${query}`);
  expect(answer.status, await answer.clone().text()).toBe(200);
  return walk(((await answer.json()) as { spans: TreeNode[] }).spans);
}

async function post(server: TestServer, spans: Record<string, unknown>[]) {
  return server.call("POST", "/traces", { resource, spans });
}

async function expectRefusedBatch(answer: Response, field: string) {
  expect(answer.status).toBe(400);
  const body = (await answer.json()) as { error: string; message: string };
  expect(body.error).toBe("invalid_request");
  expect(body.message).toContain(field);
}

describe("a trace's span tree", () => {
  it("nested 3,000 spans deep reads back whole, with and without payloads", async () => {
    t = await startTestServer();
    const spans = Array.from({ length: 3000 }, (_, index) =>
      span({
        trace_id: traceId,
        span_id: spanIdOf(index),
        parent_span_id: index === 0 ? null : spanIdOf(index - 1),
      }),
    );
    expect((await post(t, spans)).status).toBe(200);
    for (const query of ["", "?payloads=false"]) {
      const tree = await treeOf(t, query);
      expect(tree.depth).toBe(3000);
      expect(tree.spanIds).toEqual(spans.map((item) => item.span_id).sort());
    }
  });

  it("whose parents loop shows every span once, the loop's earliest as a root", async () => {
    t = await startTestServer();
    const at = (second: number) => `2026-11-20T10:00:0${second}.000Z`;
    const spans = [
      // Its own parent.
      span({ trace_id: traceId, span_id: spanIdOf(0), parent_span_id: spanIdOf(0) }),
      // Three spans each the parent of the next, the last the parent of the first; one child.
      span({ trace_id: traceId, span_id: spanIdOf(1), parent_span_id: spanIdOf(3) }),
      span({ trace_id: traceId, span_id: spanIdOf(2), parent_span_id: spanIdOf(1) }),
      span({ trace_id: traceId, span_id: spanIdOf(3), parent_span_id: spanIdOf(2) }),
      span({ trace_id: traceId, span_id: spanIdOf(4), parent_span_id: spanIdOf(2) }),
    ].map(
      (item, index): Record<string, unknown> => ({
        ...item,
        start_time: at(index),
        end_time: at(index + 1),
      }),
    );
    expect((await post(t, spans)).status).toBe(200);
    const answer = await t.call("GET", `/traces/${traceId}`);
    const roots = ((await answer.json()) as { spans: TreeNode[] }).spans;
    expect(roots.map((root) => root.span_id)).toEqual([spanIdOf(0), spanIdOf(1)]);
    expect(walk(roots)).toEqual({ spanIds: spans.map((item) => item.span_id).sort(), depth: 3 });
  });
});

describe("metadata nested deep", () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  const body = (depth: number) =>
    JSON.stringify({ resource, spans: [span({ trace_id: traceId, metadata: "HERE" })] }).replace(
      '"HERE"',
      nested(depth),
    );

  it("past 64 levels is refused by POST /traces with the field named, and nothing is stored", async () => {
    t = await startTestServer();
    for (const depth of [65, 5000, 100_000]) {
      await expectRefusedBatch(await t.call("POST", "/traces", body(depth)), "spans.0.metadata");
    }
    expect((await t.call("GET", `/traces/${traceId}`)).status).toBe(404);
    // 64 levels (the metadata object the first) are stored and read back.
    expect((await t.call("POST", "/traces", body(64))).status).toBe(200);
    const trace = await t.call("GET", `/traces/${traceId}`);
    expect(trace.status).toBe(200);
    const text = await trace.text();
    expect(text).toContain(nested(64).slice(1, -1));
  });

  it("in an OTLP metadata attribute stays the text it came as", async () => {
    t = await startTestServer();
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    const answer = await t.call("POST", "/v1/traces", otlpSpan({ metadata: deep }));
    expect(answer.status, await answer.clone().text()).toBe(200);
    const trace = (await (await t.call("GET", `/traces/${traceId}`)).json()) as {
      spans: Array<{ metadata: Record<string, unknown> }>;
    };
    expect(trace.spans[0]?.metadata).toEqual({ value: deep });
  });
});

describe("a session id", () => {
  it("over 256 characters is refused by POST /traces with the field named", async () => {
    t = await startTestServer();
    await expectRefusedBatch(
      await post(t, [span({ trace_id: traceId, session_id: "s".repeat(257) })]),
      "spans.0.session_id",
    );
    expect((await t.call("GET", `/traces/${traceId}`)).status).toBe(404);
  });

  it("of 256 characters has its page, and the session list pages past it", async () => {
    t = await startTestServer();
    const ids = ["a", "b".repeat(256), "c"];
    const spans = ids.map((session_id, index) =>
      span({
        trace_id: `tr_${String(index + 1).repeat(32)}`,
        session_id,
        start_time: `2026-11-20T10:00:0${index}.000Z`,
        end_time: `2026-11-20T10:00:0${index + 1}.000Z`,
      }),
    );
    expect((await post(t, spans)).status).toBe(200);
    expect((await t.call("GET", `/sessions/${"b".repeat(256)}`)).status).toBe(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? "" : `&cursor=${cursor}`;
      const page = await t.call("GET", `/sessions?${period}&limit=1${after}`);
      expect(page.status, await page.clone().text()).toBe(200);
      const list = (await page.json()) as {
        sessions: Array<{ session_id: string }>;
        next_cursor: string | null;
      };
      seen.push(...list.sessions.map((session) => session.session_id));
      cursor = list.next_cursor;
    } while (cursor !== null);
    expect(seen.sort()).toEqual(ids);
  });

  it("over 256 characters over OTLP is no session, and stays an attribute", async () => {
    t = await startTestServer();
    const long = "s".repeat(300);
    const answer = await t.call("POST", "/v1/traces", otlpSpan({ "session.id": long }));
    expect(answer.status).toBe(200);
    const trace = (await (await t.call("GET", `/traces/${traceId}`)).json()) as {
      session_id: string | null;
      spans: Array<{ attributes: Record<string, unknown> }>;
    };
    expect(trace.session_id).toBeNull();
    expect(trace.spans[0]?.attributes["session.id"]).toBe(long);
    const sessions = (await (await t.call("GET", `/sessions?${period}`)).json()) as {
      sessions: unknown[];
    };
    expect(sessions.sessions).toEqual([]);
  });
});

/** An OTLP/JSON request of one OpenInference LLM span of the trace, with these attributes. */
function otlpSpan(attributes: Record<string, string | { intValue: string }>) {
  const start = String(BigInt(Date.parse("2026-11-20T10:00:00Z")) * 1_000_000n);
  return {
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: traceId.slice(3),
                spanId: "b7ad6b7169203331",
                name: "chat",
                startTimeUnixNano: start,
                endTimeUnixNano: start,
                attributes: [
                  { key: "openinference.span.kind", value: { stringValue: "LLM" } },
                  ...Object.entries(attributes).map(([key, value]) => ({
                    key,
                    value: typeof value === "string" ? { stringValue: value } : value,
                  })),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

describe("an analytics report's series", () => {
  const period = "period_start=2026-11-01&period_end=2026-11-30";
  const tagged = (count: number) =>
    span({ trace_id: traceId, tags: Array.from({ length: count }, (_, index) => `tag-${index}`) });

  it("of more than 200,000 buckets over its groups is refused, naming what to change", async () => {
    t = await startTestServer();
    // 6,700 tags of 30 days: 201,000 buckets (the answer was some 270 MB, and with a longer
    // period more than a string may hold).
    expect((await post(t, [tagged(6700)])).status).toBe(200);
    for (const report of ["metrics", "costs", "performance"]) {
      const answer = await t.call(
        "GET",
        `/analytics/${report}?${period}&group_by=tag&interval=day`,
      );
      expect(answer.status, report).toBe(400);
      const body = (await answer.json()) as { error: string; message: string };
      expect(body.error).toBe("invalid_request");
      expect(body.message).toContain(
        "group_by=tag with interval=day gives 6,700 groups of 30 buckets",
      );
      // Without series, or over fewer days, the same groups are answered.
      const groups = await t.call("GET", `/analytics/${report}?${period}&group_by=tag`);
      expect(groups.status, report).toBe(200);
      expect(((await groups.json()) as { groups: unknown[] }).groups).toHaveLength(6700);
      // 1,000 days of them was a 500: more than a string can hold.
      const long = "period_start=2024-03-03&period_end=2026-11-27&group_by=tag&interval=day";
      expect((await t.call("GET", `/analytics/${report}?${long}`)).status, report).toBe(400);
      const short = "period_start=2026-11-20&period_end=2026-11-21&group_by=tag&interval=day";
      expect((await t.call("GET", `/analytics/${report}?${short}`)).status, report).toBe(200);
    }
  });
});

describe("evaluations", () => {
  it("refuse a test case's metadata nested past 64 levels, naming it, and store nothing", async () => {
    t = await startTestServer();
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const body = `{"dataset":"deep","query":"q","metadata":{"x":${deep}}}`;
    await expectRefusedBatch(await t.call("POST", "/testing/cases", body), "metadata");
    const cases = await t.call("GET", "/testing/cases?dataset=deep");
    expect(((await cases.json()) as { cases: unknown[] }).cases).toEqual([]);
  });

  it("refuse a result's cost past a billion USD, so that a run's total stays a number", async () => {
    t = await startTestServer();
    const result = (cost_usd: number) => ({
      query: "q",
      output: "o",
      scores: {},
      latency_ms: 1,
      cost_usd,
    });
    const refused = await t.call("POST", "/testing/runs", {
      results: [result(1.7e308), result(1.7e308)],
    });
    await expectRefusedBatch(refused, "results.0.cost_usd");
    const runs = await t.call("GET", "/testing/runs");
    expect(((await runs.json()) as { runs: unknown[] }).runs).toEqual([]);
    const run = await t.call("POST", "/testing/runs", { results: [result(1e9), result(1e9)] });
    expect(run.status).toBe(201);
    const summary = ((await run.json()) as { summary: { total_cost_usd: unknown } }).summary;
    expect(summary.total_cost_usd).toBe(2e9);
  });
});

describe("an OTLP model call's token counts", () => {
  it("at 2^53 - 1 each give a total that stops there, and the trace reads back", async () => {
    t = await startTestServer();
    const max = String(Number.MAX_SAFE_INTEGER);
    const request = otlpSpan({
      "gen_ai.operation.name": "chat",
      "gen_ai.usage.input_tokens": { intValue: max },
      "gen_ai.usage.output_tokens": { intValue: max },
    });
    expect((await t.call("POST", "/v1/traces", request)).status).toBe(200);
    const answer = await t.call("GET", `/traces/${traceId}`);
    expect(answer.status, await answer.clone().text()).toBe(200);
    const trace = (await answer.json()) as { spans: Array<{ usage: unknown }> };
    expect(trace.spans[0]?.usage).toEqual({
      prompt_tokens: Number.MAX_SAFE_INTEGER,
      completion_tokens: Number.MAX_SAFE_INTEGER,
      total_tokens: Number.MAX_SAFE_INTEGER,
    });
    const span = await t.call("GET", `/traces/${traceId}/spans/b7ad6b7169203331`);
    expect(span.status).toBe(200);
  });
});

describe("a trace with more payloads than an answer carries", () => {
  it("comes as with payloads=false, saying so, and each span whole by itself", async () => {
    t = await startTestServer();
    // Nine batches of 8 MB: 72 million characters, past the 67,108,864 a trace is answered
    // with (at 70 batches, past what a string holds, the trace answered 500).
    const text = "x".repeat(4_000_000);
    const spanIds: string[] = [];
    for (let batch = 0; batch < 9; batch++) {
      const each = span({ trace_id: traceId, input: text, output: text });
      spanIds.push(each.span_id as string);
      expect((await post(t, [each])).status).toBe(200);
    }
    const answer = await t.call("GET", `/traces/${traceId}`);
    expect(answer.status).toBe(200);
    const trace = (await answer.json()) as {
      payloads: boolean;
      span_count: number;
      spans: Array<{ input: string | null; omitted?: string[] }>;
    };
    expect(trace.payloads).toBe(false);
    expect(trace.span_count).toBe(9);
    expect(walk(trace.spans as unknown as TreeNode[]).spanIds).toEqual([...spanIds].sort());
    expect(trace.spans[0]?.input).toBeNull();
    expect(trace.spans[0]?.omitted).toEqual(expect.arrayContaining(["input", "output"]));
    const whole = await t.call("GET", `/traces/${traceId}/spans/${spanIds[0]}`);
    expect(((await whole.json()) as { input: string }).input).toHaveLength(4_000_000);
  });
});
