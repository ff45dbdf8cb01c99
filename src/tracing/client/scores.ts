import {
  type JudgeVerdict,
  judgeVerdictSchema,
  type Score,
  scoreListSchema,
  scoreSchema,
} from "../../core/wire/scores.js";
import { requestService } from "./request.js";

/**
 * Has the service compute a scorer (built-in or registered there) on what a trace recorded:
 * the root span's input, output and expected output (or those of `spanId`), with the documents
 * of the trace's retrieval spans as context. The score is stored on the trace.
 *
 * @example
 * const stored = await scoreTrace("tr_4bf9…", "faithfulness");
 */
export function scoreTrace(
  traceId: string,
  scorerSlug: string,
  options: { spanId?: string } = {},
): Promise<Score> {
  return requestService(
    "POST",
    "/scores",
    {
      scorer_slug: scorerSlug,
      trace_id: traceId,
      ...(options.spanId === undefined ? {} : { span_id: options.spanId }),
    },
    scoreSchema,
  );
}

/** A score given by a person or another system, stored on a trace (or one of its spans). */
export interface GivenScore {
  /** What is scored, e.g. `"review"` or `"thumbs"`. */
  name: string;
  /** 0 to 1, higher is better. */
  value: number;
  comment?: string;
  label?: string;
  spanId?: string;
}

/**
 * Records a score given by hand, for human review.
 *
 * @example
 * await addScore("tr_4bf9…", { name: "review", value: 0, comment: "cites the wrong policy" });
 */
export function addScore(traceId: string, score: GivenScore): Promise<Score> {
  const { spanId, ...rest } = score;
  return requestService(
    "POST",
    "/scores",
    { trace_id: traceId, ...rest, ...(spanId === undefined ? {} : { span_id: spanId }) },
    scoreSchema,
  );
}

/** The scores stored on a trace, oldest first. */
export async function getScores(traceId: string): Promise<Score[]> {
  const path = `/traces/${encodeURIComponent(traceId)}/scores`;
  return (await requestService("GET", path, undefined, scoreListSchema)).scores;
}

/** What to grade with the service's LLM judge: a scorer or criteria, and the texts or a trace. */
export interface JudgeOnServiceOptions {
  scorerSlug?: string;
  /** A rubric in plain words, instead of a scorer. */
  criteria?: string;
  input?: string;
  output?: string;
  expected?: string;
  context?: string | string[];
  /** Read what is not given from this trace, and store the score on it. */
  traceId?: string;
  spanId?: string;
}

/**
 * Grades with the service's LLM judge (`POST /scores/judge`). With a `traceId`, what is not
 * given is read from the trace and the verdict is stored on it.
 */
export function judgeOnService(options: JudgeOnServiceOptions): Promise<JudgeVerdict> {
  const body: Record<string, unknown> = {
    scorer_slug: options.scorerSlug,
    criteria: options.criteria,
    input: options.input,
    output: options.output,
    expected: options.expected,
    context: options.context,
    trace_id: options.traceId,
    span_id: options.spanId,
  };
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return requestService("POST", "/scores/judge", body, judgeVerdictSchema);
}
