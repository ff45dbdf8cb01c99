import { correctness } from "./correctness.js";
import { faithfulness } from "./faithfulness.js";
import { helpfulness } from "./helpfulness.js";
import { toxicity } from "./toxicity.js";
import type { Scorer } from "./types.js";

/** The slugs of the scorers Cairn ships. */
export type BuiltinScorerSlug = "correctness" | "faithfulness" | "toxicity" | "helpfulness";

/**
 * The scorers Cairn ships, by slug. Each grades by rules when its context holds no judge, and
 * asks the judge when it does: the callers give it the judge only for a slug ending in
 * `:judge`. See docs/scorers.md for how each one scores.
 */
export const builtinScorers: Readonly<Record<BuiltinScorerSlug, Scorer>> = Object.freeze({
  correctness,
  faithfulness,
  toxicity,
  helpfulness,
});

/** The built-in scorers no rule can grade: asked for without `:judge`, they cannot run. */
export const judgeOnlyScorers: ReadonlySet<string> = new Set<BuiltinScorerSlug>(["helpfulness"]);

/** One line on what each built-in scorer measures, for listings. */
export const builtinScorerDescriptions: Readonly<Record<BuiltinScorerSlug, string>> = Object.freeze(
  {
    correctness:
      "Matches the output with the expected output: exact, numeric, or word-overlap F1 (correctness:judge asks the LLM judge instead).",
    faithfulness:
      "Share of the output's sentences supported by the retrieved documents (faithfulness:judge has the LLM judge check each claim).",
    toxicity:
      "1 when the output is free of profanity and slurs, 0 when toxic (toxicity:judge has the LLM judge also rate insults, threats and harassment).",
    helpfulness:
      "How well the output addresses the input's request: complete, accurate, useful, concise. Judge only: ask for helpfulness:judge.",
  },
);
