import { randomBytes } from "node:crypto";
import { log } from "../../core/logger.js";
import type { ExportedSpan } from "../../core/wire/index.js";
import { PriceTable } from "../../tracing/prices.js";
import type { TraceJudgeCall } from "../../tracing/scoring/judge.js";
import { sdkName, sdkVersion } from "../../tracing/sdk-info.js";
import type { SpanRepository } from "../store/store.js";

interface CompletionLike {
  model?: unknown;
  choices?: Array<{ message?: { content?: unknown } }>;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
}

const count = (value: unknown) => (typeof value === "number" && value >= 0 ? Math.round(value) : 0);

/**
 * Records each call the service's judge makes as an `llm` span of its own trace, in the
 * project that asked for the grade, with tokens and cost: the judge's spend shows in the
 * project's analytics like any other model call. Tagged `cairn.judge`.
 */
export function judgeSpanRecorder(spans: SpanRepository, projectId: string): TraceJudgeCall {
  const prices = new PriceTable();
  return async (call, run) => {
    const started = Date.now();
    let completion: CompletionLike | undefined;
    let failure: unknown;
    try {
      const result = await run();
      completion = result as CompletionLike;
      return result;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const ended = Date.now();
      const model = typeof completion?.model === "string" ? completion.model : call.model;
      const usage =
        completion?.usage === undefined
          ? null
          : {
              prompt_tokens: count(completion.usage.prompt_tokens),
              completion_tokens: count(completion.usage.completion_tokens),
              total_tokens: count(completion.usage.total_tokens),
            };
      const cost = usage === null ? undefined : prices.cost(model, usage).usd;
      const content = completion?.choices?.[0]?.message?.content;
      const span: ExportedSpan = {
        trace_id: `tr_${randomBytes(16).toString("hex")}`,
        span_id: randomBytes(8).toString("hex"),
        parent_span_id: null,
        name: `judge ${call.name}`.slice(0, 1024),
        kind: "llm",
        start_time: new Date(started).toISOString(),
        end_time: new Date(ended).toISOString(),
        duration_ms: ended - started,
        status: failure === undefined ? "ok" : "error",
        status_message:
          failure === undefined ? null : String((failure as Error).message ?? failure),
        input: JSON.stringify(call.messages),
        output: typeof content === "string" ? content : null,
        expected_output: null,
        model,
        session_id: null,
        tags: ["cairn.judge"],
        version: null,
        metadata: {},
        usage,
        cost_usd: cost ?? null,
        attributes: { "cairn.judge": true },
        events: [],
      };
      try {
        await spans.ingest(projectId, {
          resource: { service_name: "cairn-judge", sdk_name: sdkName, sdk_version: sdkVersion },
          spans: [span],
        });
      } catch (error) {
        // The grade matters more than its span: say so, and go on.
        log.error("could not record the judge's span", error);
      }
    }
  };
}
