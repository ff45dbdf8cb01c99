import { z } from "zod";
import { ConfigurationError, JudgeError } from "../../core/errors/index.js";
import { describeIssues } from "../../core/zod-message.js";
import type { ScoreResult, Scorer, ScorerContext, ScorerInput } from "./types.js";

const resultSchema = z.object({
  score: z.number().min(0).max(1).nullable(),
  label: z.string().optional(),
  reason: z.string(),
});

export interface RunScorerOptions {
  /**
   * What a judge that cannot grade (unreachable, bad key, no credit) becomes: `"score"` (the
   * default) records `score: null` with the judge's message, so a test run goes on; `"throw"`
   * lets the `JudgeError` through, for callers that report it themselves (the service's 502).
   */
  readonly judgeErrors?: "score" | "throw";
  /** How long the scorer may take; past it, `score: null` with a reason. Default: no limit. */
  readonly timeoutMs?: number;
}

/** Settles with `work`, or with `undefined` once `timeoutMs` has passed. */
async function within<T>(
  work: Promise<T>,
  timeoutMs: number | undefined,
): Promise<T | typeof late> {
  if (timeoutMs === undefined) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof late>((resolve) => {
    timer = setTimeout(() => resolve(late), timeoutMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
const late = Symbol("late");

/**
 * Runs a scorer and checks what it returned. A scorer that throws, takes too long, or returns
 * something else than `{ score, label?, reason }` gives `score: null` with a reason that says
 * so. Thrown on, since every case would fail the same way: a ConfigurationError (a scorer that
 * needs a judge, without one) and a judge that refuses for good (bad key, no credit, no model).
 */
export async function runScorer(
  name: string,
  scorer: Scorer,
  input: ScorerInput,
  context: ScorerContext,
  options: RunScorerOptions = {},
): Promise<ScoreResult> {
  let returned: unknown;
  try {
    returned = await within(
      Promise.resolve().then(() => scorer(input, context)),
      options.timeoutMs,
    );
  } catch (error) {
    if (ConfigurationError.isInstance(error)) throw error;
    if (JudgeError.isInstance(error)) {
      if (options.judgeErrors === "throw" || !error.retryable) throw error;
      return { score: null, label: "judge_error", reason: error.message };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { score: null, label: "scorer_error", reason: `the ${name} scorer threw: ${message}` };
  }
  if (returned === late) {
    return {
      score: null,
      label: "scorer_error",
      reason: `the ${name} scorer did not finish within ${Math.round((options.timeoutMs ?? 0) / 1000)} s`,
    };
  }
  const parsed = resultSchema.safeParse(returned);
  if (!parsed.success) {
    return {
      score: null,
      label: "scorer_error",
      reason: `the ${name} scorer returned something else than { score: 0 to 1 or null, label?, reason }: ${describeIssues(parsed.error)}`,
    };
  }
  const { score, label, reason } = parsed.data;
  return label === undefined ? { score, reason } : { score, label, reason };
}
