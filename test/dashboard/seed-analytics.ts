// Traces over several past days, posted through the API as an app's exporter would send them
// (the service takes spans of any past time): two models, two versions and some failures, with
// the figures they add up to, for a page that charts or counts them.

import { expect } from "vitest";
import { resource, span, type TestServer } from "../server/helpers.js";

export const analyticsModels = ["gpt-4o", "claude-3-5-haiku"] as const;

export interface SeededDays {
  /** The UTC days that have traces (YYYY-MM-DD), oldest first. */
  readonly days: readonly string[];
  readonly traces: number;
  readonly spans: number;
  readonly errorSpans: number;
  readonly tokens: number;
  readonly costUsd: number;
  /** Nearest-rank percentiles of every span's duration, ms. */
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** Per model: spans, tokens and cost over the period, and tokens of each day. */
  readonly byModel: Readonly<
    Record<
      (typeof analyticsModels)[number],
      { spans: number; tokens: number; costUsd: number; tokensPerDay: number }
    >
  >;
}

const dayMs = 86_400_000;

/**
 * Four traces a day on each of the five UTC days before today, at 10:00 UTC: an agent root
 * (support-agent, version 1.0.0 for the three older days, 1.1.0 after) and its llm call, the
 * models taking turns (gpt-4o: 100 + 50 tokens, $0.0015; claude-3-5-haiku: 200 + 100 tokens,
 * $0.003). On every other day (5, 3 and 1 days ago) the day's first trace fails, both spans.
 * The llm calls last 200, 250, 300 and 350 ms in a day's order, their roots 300 ms more.
 */
export async function seedDays(t: TestServer, now = Date.now()): Promise<SeededDays> {
  const today = Math.floor(now / dayMs) * dayMs;
  const days: string[] = [];
  const spans: Array<Record<string, unknown>> = [];
  for (let ago = 5; ago >= 1; ago--) {
    const dayStart = today - ago * dayMs;
    days.push(new Date(dayStart).toISOString().slice(0, 10));
    for (let index = 0; index < 4; index++) {
      const model = analyticsModels[index % 2] as (typeof analyticsModels)[number];
      const traceNumber = ago * 16 + index;
      const traceId = `tr_${(0xa5a5_0000 + traceNumber).toString(16).padStart(32, "0")}`;
      const rootId = `${traceNumber.toString(16).padStart(12, "0")}0001`;
      const start = dayStart + 10 * 3_600_000 + index * 60_000;
      const llmMs = 200 + 50 * index;
      const failed = index === 0 && ago % 2 === 1;
      const status = failed ? "error" : "ok";
      const common = {
        trace_id: traceId,
        version: ago >= 3 ? "1.0.0" : "1.1.0",
        tags: ["support"],
        status,
        status_message: failed ? "the model answered 503" : null,
      };
      spans.push(
        span({
          ...common,
          span_id: rootId,
          parent_span_id: null,
          name: "support-agent",
          kind: "agent",
          start_time: new Date(start).toISOString(),
          end_time: new Date(start + llmMs + 300).toISOString(),
          duration_ms: llmMs + 300,
        }),
        span({
          ...common,
          span_id: `${traceNumber.toString(16).padStart(12, "0")}0002`,
          parent_span_id: rootId,
          name: "draft-reply",
          kind: "llm",
          model,
          start_time: new Date(start + 10).toISOString(),
          end_time: new Date(start + 10 + llmMs).toISOString(),
          duration_ms: llmMs,
          usage:
            model === "gpt-4o"
              ? { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 }
              : { prompt_tokens: 200, completion_tokens: 100, total_tokens: 300 },
          cost_usd: model === "gpt-4o" ? 0.0015 : 0.003,
        }),
      );
    }
  }
  const stored = await t.call("POST", "/traces", { resource, spans });
  expect(stored.status).toBe(200);
  return {
    days,
    traces: 20,
    spans: 40,
    errorSpans: 6,
    tokens: 4500,
    costUsd: 0.045,
    // 200, 250, 300, 350, 500, 550, 600, 650 ms, five of each.
    p50Ms: 350,
    p95Ms: 650,
    byModel: {
      "gpt-4o": { spans: 10, tokens: 1500, costUsd: 0.015, tokensPerDay: 300 },
      "claude-3-5-haiku": { spans: 10, tokens: 3000, costUsd: 0.03, tokensPerDay: 600 },
    },
  };
}
