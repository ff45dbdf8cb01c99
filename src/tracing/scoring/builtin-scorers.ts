import { correctness } from "./correctness.js";
import { faithfulness } from "./faithfulness.js";
import { helpfulness } from "./helpfulness.js";
import { toxicity } from "./toxicity.js";
import type { Scorer } from "./types.js";

/** The slugs of the scorers Cairn ships. */
export type BuiltinScorerSlug = "correctness" | "faithfulness" | "toxicity" | "helpfulness";

/** The scorers Cairn ships, by slug. See docs/scorers.md for how each one scores. */
export const builtinScorers: Readonly<Record<BuiltinScorerSlug, Scorer>> = Object.freeze({
  correctness,
  faithfulness,
  toxicity,
  helpfulness,
});

/** One line on what each built-in scorer measures, for listings. */
export const builtinScorerDescriptions: Readonly<Record<BuiltinScorerSlug, string>> = Object.freeze(
  {
    correctness:
      "Matches the output with the expected output: exact, numeric, or word-overlap F1 (an LLM judge grades it when configured).",
    faithfulness:
      "Share of the output's sentences supported by the retrieved documents (an LLM judge checks each claim when configured).",
    toxicity:
      "1 when the output is free of profanity and slurs, 0 when toxic (an LLM judge also rates insults, threats and harassment when configured).",
    helpfulness:
      "How well the output addresses the input's request: complete, accurate, useful, concise. Needs an LLM judge.",
  },
);
