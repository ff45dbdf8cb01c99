import { ConfigurationError } from "../../core/errors/index.js";
import { builtinScorers } from "./builtin-scorers.js";
import type { Scorer } from "./types.js";

/** What a scorer slug may be: 1 to 64 lowercase letters, digits, _ and -. */
export const scorerSlugPattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const registered = new Map<string, Scorer>();

/**
 * Adds a scorer under `slug`, for `score()`, `runTests()` and `POST /scores` on a service
 * started in this process. Registering a slug again replaces your scorer; the built-in slugs
 * (correctness, faithfulness, toxicity, helpfulness) cannot be replaced. Asked for as
 * `slug:judge`, the scorer is given the LLM judge in its context; as `slug`, it is not.
 *
 * @example
 * registerScorer("mentions-refund", ({ output }) => ({
 *   score: /refund/i.test(output) ? 1 : 0,
 *   reason: /refund/i.test(output) ? "mentions a refund" : "never mentions a refund",
 * }));
 */
export function registerScorer(slug: string, scorer: Scorer): void {
  if (typeof slug !== "string" || !scorerSlugPattern.test(slug)) {
    throw new ConfigurationError(
      `registerScorer(): "${String(slug)}" is not a scorer slug; use 1 to 64 lowercase letters, digits, _ and -`,
    );
  }
  if (isBuiltinScorer(slug)) {
    throw new ConfigurationError(
      `registerScorer(): "${slug}" is a built-in scorer; register yours under another slug`,
    );
  }
  if (typeof scorer !== "function") {
    throw new ConfigurationError(
      `registerScorer(): the scorer for "${slug}" must be a function returning { score, label?, reason }`,
    );
  }
  registered.set(slug, scorer);
}

/** Removes a scorer you registered; false when there was none under `slug`. */
export function unregisterScorer(slug: string): boolean {
  return registered.delete(slug);
}

/** The scorer under `slug`: a built-in, else one registered in this process. */
export function findScorer(slug: string): Scorer | undefined {
  return isBuiltinScorer(slug)
    ? builtinScorers[slug as keyof typeof builtinScorers]
    : registered.get(slug);
}

/** Every slug `findScorer` knows: the built-ins, then the registered ones. */
export function scorerSlugs(): string[] {
  return [...Object.keys(builtinScorers), ...registered.keys()];
}

/** True for correctness, faithfulness, toxicity and helpfulness. */
export function isBuiltinScorer(slug: string): boolean {
  return Object.hasOwn(builtinScorers, slug);
}
