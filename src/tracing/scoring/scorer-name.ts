import { judgeOnlyScorers } from "./builtin-scorers.js";
import type { Scorer } from "./types.js";

/** Ends the name of a scorer that is to ask the LLM judge: `correctness:judge`. */
export const judgeSuffix = ":judge";

/** A scorer as a call or a run named it. */
export interface ScorerChoice {
  /** The name given, `correctness` or `correctness:judge`: the score is recorded under it. */
  readonly name: string;
  /** The scorer's slug, without `:judge`. */
  readonly slug: string;
  /** True when the name asks for the LLM judge; the scorer is given the judge only then. */
  readonly judge: boolean;
}

/** Reads a scorer name: `correctness` grades by rules, `correctness:judge` asks the judge. */
export function readScorerName(name: string): ScorerChoice {
  const judge = name.endsWith(judgeSuffix);
  return { name, slug: judge ? name.slice(0, -judgeSuffix.length) : name, judge };
}

/** What a scorer name stands for, or why it stands for nothing that can run. */
export type ScorerLookup =
  | { readonly found: true; readonly choice: ScorerChoice; readonly scorer: Scorer }
  | { readonly found: false; readonly problem: "unknown"; readonly slug: string }
  | { readonly found: false; readonly problem: "judge_only"; readonly message: string };

/**
 * The scorer `name` asks for, among those `find` knows by slug. A judge-only scorer asked for
 * without `:judge` is refused here, before anything runs, since no rule could grade it.
 */
export function lookUpScorer(
  name: string,
  find: (slug: string) => Scorer | undefined,
): ScorerLookup {
  const choice = readScorerName(name);
  const scorer = find(choice.slug);
  if (scorer === undefined) return { found: false, problem: "unknown", slug: choice.slug };
  if (!choice.judge && judgeOnlyScorers.has(choice.slug)) {
    return {
      found: false,
      problem: "judge_only",
      message: `the ${choice.slug} scorer is graded by the LLM judge only, and the judge grades only when asked: use "${choice.slug}${judgeSuffix}"`,
    };
  }
  return { found: true, choice, scorer };
}
