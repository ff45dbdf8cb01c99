import { ConfigurationError } from "../../core/errors/index.js";
import { activeJudge } from "./configured-judge.js";
import { findScorer } from "./registry.js";
import { runScorer } from "./run-scorer.js";
import type { ScoreResult, Scorer, ScorerInput } from "./types.js";

/**
 * Scores one answer here, with a built-in or registered scorer (by slug) or a scorer function,
 * using the judge of `configure({ judge })` or CAIRN_JUDGE_* when one is set. A judge that
 * cannot grade throws its `JudgeError`; a scorer that fails gives `score: null` with the reason.
 *
 * @example
 * const { score: value, reason } = await score("correctness", {
 *   output: "Refunds take 5 business days.",
 *   expected: "5 business days",
 * });
 */
export async function score(scorer: string | Scorer, input: ScorerInput): Promise<ScoreResult> {
  const found = typeof scorer === "string" ? findScorer(scorer) : scorer;
  if (typeof found !== "function") {
    throw new ConfigurationError(
      typeof scorer === "string"
        ? `score(): no scorer "${scorer}"; use correctness, faithfulness, toxicity, helpfulness or one you registered with registerScorer()`
        : "score(): the scorer must be a slug or a function returning { score, label?, reason }",
    );
  }
  if (typeof input?.output !== "string") {
    throw new ConfigurationError("score(): input.output must be the answer to score, as a string");
  }
  const name = typeof scorer === "string" ? scorer : scorer.name || "custom";
  return runScorer(name, found, input, { judge: activeJudge() }, { judgeErrors: "throw" });
}
