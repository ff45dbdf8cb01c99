import { ConfigurationError } from "../../core/errors/index.js";
import { judgeAskedFor } from "./configured-judge.js";
import { findScorer } from "./registry.js";
import { runScorer } from "./run-scorer.js";
import { lookUpScorer } from "./scorer-name.js";
import type { ScoreResult, Scorer, ScorerInput } from "./types.js";

/**
 * Scores one answer here, with a built-in or registered scorer (by slug) or a scorer function.
 * A plain slug grades by rules and never calls a model; a slug ending in `:judge`
 * (`correctness:judge`) asks the judge of `configure({ judge })` or CAIRN_JUDGE_*, and throws
 * a ConfigurationError when there is none. A scorer function is given no judge. A judge that
 * cannot grade throws its `JudgeError`; a scorer that fails gives `score: null` with the reason.
 *
 * @example
 * const { score: value, reason } = await score("correctness", {
 *   output: "Refunds take 5 business days.",
 *   expected: "5 business days",
 * });
 * const judged = await score("correctness:judge", { output: "Five days.", expected: "5 business days" });
 */
export async function score(scorer: string | Scorer, input: ScorerInput): Promise<ScoreResult> {
  if (typeof scorer === "function") {
    checkOutput(input);
    return runScorer(scorer.name || "custom", scorer, input, {}, { judgeErrors: "throw" });
  }
  const found = typeof scorer === "string" ? lookUpScorer(scorer, findScorer) : undefined;
  if (found === undefined || !found.found) {
    throw new ConfigurationError(
      found === undefined
        ? "score(): the scorer must be a slug or a function returning { score, label?, reason }"
        : found.problem === "unknown"
          ? `score(): no scorer "${found.slug}"; use correctness, faithfulness, toxicity, helpfulness or one you registered with registerScorer(), with :judge to have the LLM judge grade`
          : `score(): ${found.message}`,
    );
  }
  checkOutput(input);
  const { choice } = found;
  const judge = judgeAskedFor(choice.judge ? [choice.name] : [], "score()");
  return runScorer(choice.name, found.scorer, input, { judge }, { judgeErrors: "throw" });
}

function checkOutput(input: ScorerInput): void {
  if (typeof input?.output !== "string") {
    throw new ConfigurationError("score(): input.output must be the answer to score, as a string");
  }
}
