// Token counts and costs at the edge of what a number holds: each span's counts are safe
// integers, but a trace, a session or a period adds any number of them. Sums that went past
// Number.MAX_SAFE_INTEGER were stored and then made the project's trace list, the trace and its
// session answer 500 (and the next batch of the trace too); costs near Number.MAX_VALUE summed
// to Infinity, which JSON writes as null.

import { afterEach, describe, expect, it } from "vitest";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const max = Number.MAX_SAFE_INTEGER;
const traceId = `tr_${"7".repeat(32)}`;
const period = "period_start=2026-11-19&period_end=2026-11-21";

describe("token counts that add up past a number's exact integers", () => {
  it("are stored, and the trace, its session and the lists keep answering", async () => {
    t = await startTestServer();
    const server = t;
    for (let batch = 0; batch < 3; batch++) {
      const spans = Array.from({ length: 400 }, () =>
        span({
          trace_id: traceId,
          kind: "llm",
          session_id: "ses-huge",
          usage: { prompt_tokens: max, completion_tokens: max, total_tokens: max },
        }),
      );
      const answer = await server.call("POST", "/traces", { resource, spans });
      expect(answer.status, await answer.clone().text()).toBe(200);
      expect(await answer.json()).toEqual({ accepted: 400, duplicates: 0 });
    }
    const trace = await server.call("GET", `/traces/${traceId}`);
    expect(trace.status).toBe(200);
    // The sums stop at the largest exact integer rather than turning unreadable.
    expect(await trace.json()).toMatchObject({
      span_count: 1200,
      usage: { prompt_tokens: max, completion_tokens: max, total_tokens: max },
    });
    for (const path of [
      `/analytics/traces?${period}`,
      "/sessions",
      "/sessions/ses-huge",
      `/analytics/metrics?${period}`,
    ]) {
      expect((await server.call("GET", path)).status, path).toBe(200);
    }
  });
});

describe("a span's cost", () => {
  it("past a billion USD is refused by POST /traces with the field named", async () => {
    t = await startTestServer();
    for (const cost_usd of [1.7e308, 1e9 + 1]) {
      const answer = await t.call("POST", "/traces", {
        resource,
        spans: [span({ trace_id: traceId, kind: "llm", cost_usd })],
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { message: string }).message).toMatch(/spans\.0\.cost_usd/);
    }
    expect((await t.call("GET", `/traces/${traceId}`)).status).toBe(404);
    // The most a span may cost, twice, still sums to a number.
    const spans = [1e9, 1e9].map((cost_usd) => span({ trace_id: traceId, kind: "llm", cost_usd }));
    expect((await t.call("POST", "/traces", { resource, spans })).status).toBe(200);
    const costs = await t.call("GET", `/analytics/costs?${period}`);
    expect(((await costs.json()) as { total_cost_usd: unknown }).total_cost_usd).toBe(2e9);
  });

  it("past a billion USD over OTLP is not taken as the span's cost, and stays an attribute", async () => {
    t = await startTestServer();
    const start = String(BigInt(Date.parse("2026-11-20T00:00:00Z")) * 1_000_000n);
    const answer = await t.call("POST", "/v1/traces", {
      resourceSpans: [
        {
          resource: { attributes: [] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "7".repeat(32),
                  spanId: "b7ad6b7169203331",
                  name: "chat",
                  startTimeUnixNano: start,
                  endTimeUnixNano: start,
                  attributes: [{ key: "cairn.cost.usd", value: { doubleValue: 1.7e308 } }],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(answer.status).toBe(200);
    const trace = (await (await t.call("GET", `/traces/${traceId}`)).json()) as {
      cost_usd: number;
      spans: Array<{ cost_usd: number | null; attributes: Record<string, unknown> }>;
    };
    expect(trace.cost_usd).toBe(0);
    expect(trace.spans[0]?.cost_usd).toBeNull();
    expect(trace.spans[0]?.attributes["cairn.cost.usd"]).toBe(1.7e308);
  });
});
