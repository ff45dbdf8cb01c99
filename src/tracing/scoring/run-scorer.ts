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
}

/**
 * Runs a scorer and checks what it returned. A scorer that throws or returns something else
 * than `{ score, label?, reason }` gives `score: null` with a reason that says so; a
 * ConfigurationError (a scorer that needs a judge, without one) is thrown, since every case
 * would fail the same way.
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
    returned = await scorer(input, context);
  } catch (error) {
    if (ConfigurationError.isInstance(error)) throw error;
    if (JudgeError.isInstance(error)) {
      if (options.judgeErrors === "throw") throw error;
      return { score: null, label: "judge_error", reason: error.message };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { score: null, label: "scorer_error", reason: `the ${name} scorer threw: ${message}` };
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
