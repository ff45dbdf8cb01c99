// The spans that the analytics tests share, over HTTP (analytics-api.test.ts,
// analytics-series.test.ts) and at the store on both engines (test/store/analytics.test.ts),
// and what the reports say of them.
import { spanAt } from "./analytics-helpers.js";

type SpanFields = Record<string, unknown>;

/** The days `periodSpans` fill, both included. */
export const period = "period_start=2026-11-01&period_end=2026-11-02";

// 100 llm calls of 1..100 ms on 2026-11-01, every tenth failing; 4 tool calls of 200..800 ms
// around midnight, the first repeating a model call's usage and cost, which count for model
// calls only; two spans just outside the period.
const llmCalls = () =>
  Array.from({ length: 100 }, (_, index) => {
    const i = index + 1;
    return spanAt(new Date(Date.parse("2026-11-01T10:00:00Z") + i * 1000).toISOString(), i, {
      kind: "llm",
      name: "draft",
      model: "gpt-4o",
      version: "1.0.0",
      status: i % 10 === 0 ? "error" : "ok",
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      cost_usd: 0.001,
      tags: i <= 20 ? ["prod", "beta"] : ["prod"],
    });
  });
const toolCalls = () =>
  [
    ["2026-11-01T23:59:59.000Z", 200, ["beta", "beta"]],
    ["2026-11-01T23:59:59.999Z", 400, ["beta"]],
    ["2026-11-02T00:00:00.000Z", 600, ["beta"]],
    ["2026-11-02T23:59:59.999Z", 800, ["beta"]],
  ].map(([start, ms, tags], index) =>
    spanAt(start as string, ms as number, {
      kind: "tool",
      name: "search",
      version: "1.1.0",
      status: index === 3 ? "error" : "ok",
      tags,
      ...(index === 0
        ? { usage: { prompt_tokens: 500, completion_tokens: 500, total_tokens: 1000 }, cost_usd: 9 }
        : {}),
    }),
  );
const outside = () =>
  ["2026-10-31T23:59:59.999Z", "2026-11-03T00:00:00.000Z"].map((start) =>
    spanAt(start, 5000, {
      kind: "llm",
      name: "draft",
      model: "gpt-4o",
      version: "1.0.0",
      usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
      cost_usd: 1,
      tags: ["prod"],
    }),
  );

/**
 * Project a's spans (the calls above, and the two outside the period) and project b's (one
 * llm call of 7 ms costing 5 USD), new span ids each time.
 */
export function periodSpans(): { a: SpanFields[]; b: SpanFields[] } {
  return {
    a: [...llmCalls(), ...toolCalls(), ...outside()],
    b: [
      spanAt("2026-11-01T12:00:00Z", 7, {
        kind: "llm",
        model: "gpt-4o",
        cost_usd: 5,
        tags: ["prod"],
      }),
    ],
  };
}

/** The reports of project a's spans over `period`. */
export const periodReports = {
  metricsByModel: {
    period_start: "2026-11-01",
    period_end: "2026-11-02",
    group_by: "model",
    kind: null,
    service: null,
    totals: {
      span_count: 104,
      error_count: 11,
      error_rate: 11 / 104,
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
    },
    groups: [
      {
        key: "gpt-4o",
        span_count: 100,
        error_count: 10,
        error_rate: 0.1,
        prompt_tokens: 1000,
        completion_tokens: 500,
        total_tokens: 1500,
      },
      {
        key: null,
        span_count: 4,
        error_count: 1,
        error_rate: 0.25,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
      },
    ],
  },
  costsByModel: {
    period_start: "2026-11-01",
    period_end: "2026-11-02",
    group_by: "model",
    kind: null,
    service: null,
    total_cost_usd: 0.1,
    groups: [
      {
        key: "gpt-4o",
        cost_usd: 0.1,
        span_count: 100,
        days: [{ date: "2026-11-01", cost_usd: 0.1, span_count: 100 }],
      },
      {
        key: null,
        cost_usd: 0,
        span_count: 4,
        days: [
          { date: "2026-11-01", cost_usd: 0, span_count: 2 },
          { date: "2026-11-02", cost_usd: 0, span_count: 2 },
        ],
      },
    ],
    days: [
      { date: "2026-11-01", cost_usd: 0.1, span_count: 102 },
      { date: "2026-11-02", cost_usd: 0, span_count: 2 },
    ],
  },
  performanceByKind: {
    period_start: "2026-11-01",
    period_end: "2026-11-02",
    group_by: "kind",
    kind: null,
    service: null,
    totals: {
      span_count: 104,
      mean_ms: 67.788,
      p50_ms: 52,
      p95_ms: 99,
      p99_ms: 600,
      max_ms: 800,
    },
    groups: [
      {
        key: "llm",
        span_count: 100,
        mean_ms: 50.5,
        p50_ms: 50,
        p95_ms: 95,
        p99_ms: 99,
        max_ms: 100,
      },
      {
        key: "tool",
        span_count: 4,
        mean_ms: 500,
        p50_ms: 400,
        p95_ms: 800,
        p99_ms: 800,
        max_ms: 800,
      },
    ],
  },
  /** The beta group of performance by tag. */
  betaLatency: {
    key: "beta",
    span_count: 24,
    mean_ms: 92.083,
    p50_ms: 12,
    p95_ms: 600,
    p99_ms: 800,
    max_ms: 800,
  },
};

interface Seeded {
  readonly trace: number;
  readonly start: string;
  readonly rootMs: number;
  readonly llmMs: number;
  readonly version: string;
  readonly model: string;
  readonly tokens: number;
  readonly cost: number;
  readonly failed?: boolean;
  readonly tags?: string[];
  /** The root has a parent of the host app's and says it is Cairn's root (cairn.root). */
  readonly hostParent?: boolean;
}

// Five traces, an agent root and its llm call each: three on 2026-11-01 (two at 09:xx, one at
// 23:30), one just after midnight whose root has a host parent, none on 2026-11-03, one on 11-04.
const seeded: readonly Seeded[] = [
  {
    trace: 1,
    start: "2026-11-01T09:30:00Z",
    rootMs: 100,
    llmMs: 40,
    version: "1.0",
    model: "gpt-4o",
    tokens: 15,
    cost: 0.01,
    tags: ["prod"],
  },
  {
    trace: 2,
    start: "2026-11-01T09:45:00Z",
    rootMs: 200,
    llmMs: 60,
    version: "1.0",
    model: "claude",
    tokens: 30,
    cost: 0.02,
    failed: true,
    tags: ["prod", "beta"],
  },
  {
    trace: 3,
    start: "2026-11-01T23:30:00Z",
    rootMs: 300,
    llmMs: 80,
    version: "2.0",
    model: "gpt-4o",
    tokens: 45,
    cost: 0.03,
  },
  {
    trace: 4,
    start: "2026-11-02T00:15:00Z",
    rootMs: 400,
    llmMs: 20,
    version: "2.0",
    model: "claude",
    tokens: 60,
    cost: 0.04,
    hostParent: true,
  },
  {
    trace: 5,
    start: "2026-11-04T12:00:00Z",
    rootMs: 500,
    llmMs: 10,
    version: "2.0",
    model: "gpt-4o",
    tokens: 75,
    cost: 0.05,
  },
];

function spansOf(trace: Seeded) {
  const traceId = `tr_${trace.trace.toString(16).padStart(32, "0")}`;
  const rootId = `${trace.trace.toString(16).padStart(8, "0")}00000001`;
  const common = { trace_id: traceId, version: trace.version, tags: trace.tags ?? [] };
  const status = trace.failed === true ? "error" : "ok";
  const llmStart = new Date(Date.parse(trace.start) + 5).toISOString();
  return [
    spanAt(trace.start, trace.rootMs, {
      ...common,
      span_id: rootId,
      parent_span_id: trace.hostParent === true ? "ffffffffffffffff" : null,
      attributes: trace.hostParent === true ? { "cairn.root": true } : {},
      kind: "agent",
      name: "answer",
      status,
    }),
    spanAt(llmStart, trace.llmMs, {
      ...common,
      span_id: `${trace.trace.toString(16).padStart(8, "0")}00000002`,
      parent_span_id: rootId,
      kind: "llm",
      name: "draft",
      model: trace.model,
      status,
      usage: {
        prompt_tokens: (trace.tokens * 2) / 3,
        completion_tokens: trace.tokens / 3,
        total_tokens: trace.tokens,
      },
      cost_usd: trace.cost,
    }),
  ];
}

/** The spans of the five traces above: an agent root and its llm call each. */
export function seriesSpans(): SpanFields[] {
  return seeded.flatMap(spansOf);
}
