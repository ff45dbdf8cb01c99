import { ConfigurationError } from "../../core/errors/index.js";
import {
  answerTokens,
  type ExtractedNumber,
  extractNumbers,
  foldUnicode,
  normaliseAnswer,
  quote,
  sameNumber,
  stem,
  stopWords,
  words,
} from "./text.js";
import type { ScoreResult, Scorer } from "./types.js";

/** Options of {@link createCorrectness}. */
export interface CorrectnessOptions {
  /**
   * Relative tolerance when the expected answer is a number: `1234.5` matches `1234.5000001`.
   * Default `1e-6`; values near zero also match within an absolute `1e-9`.
   */
  readonly tolerance?: number;
}

/** Score given to an output that contains the whole expected answer inside a longer text. */
const containmentFloor = 0.8;

const absoluteTolerance = 1e-9;

const judgeRubric = `Decide whether the OUTPUT correctly answers the INPUT, taking the EXPECTED answer as the truth.
- Score 1 when the output states what the expected answer states, fully, and contradicts none of it.
- Score 0.5 when it is partly correct: part of the expected answer is missing, or one detail (a number, a name, a date) is wrong while the rest is right.
- Score 0 when it is wrong, contradicts the expected answer, or does not answer.
Differences in wording, order, formatting, or how a number or unit is written (1,234.50 and 1234.5; 15% and 0.15) do not matter. Extra details are fine as long as they do not contradict the expected answer. Numbers must be equal in value.
In the reason, name what is missing or wrong, if anything.`;

// Currency words say how a number is written, not what it counts: "$20" answers "20 USD".
const currencyWords: ReadonlySet<string> = new Set(
  "usd eur gbp jpy cad aud chf inr cny dollar dollars euro euros pound pounds yen".split(" "),
);

interface NumericAnswer {
  readonly number: ExtractedNumber;
  /** The stem of the unit written with the number ("days" → "day"), if any. */
  readonly unit: string | undefined;
}

/**
 * Creates a `correctness` scorer with its own options.
 *
 * @example
 * ```ts
 * const lenientCorrectness = createCorrectness({ tolerance: 0.005 });
 * ```
 */
export function createCorrectness(options: CorrectnessOptions = {}): Scorer {
  const tolerance = options.tolerance ?? 1e-6;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigurationError(
      `correctness: tolerance must be a finite number of 0 or more, got ${String(tolerance)}`,
    );
  }
  return (input, context) => {
    const expected = input.expected;
    if (expected === undefined || expected.trim() === "") {
      return {
        score: null,
        reason:
          "Correctness compares the output with an expected output, and none was given: set the expected output of the run or the dataset item.",
      };
    }
    if (context.judge !== undefined) {
      return context.judge.grade({
        name: "correctness",
        rubric: judgeRubric,
        input: input.input,
        output: input.output,
        expected,
      });
    }
    return compare(input.output, expected, tolerance);
  };
}

/**
 * Compares the output with the expected answer. In order: a normalised exact match (case,
 * punctuation, articles and accents ignored) scores 1, `"exact"`; when the expected answer is
 * a number with at most a unit, the same number in the output scores 1, `"numeric"`, and a
 * single different number 0, `"incorrect"`; otherwise SQuAD token F1, raised to 0.8 with label
 * `"contains"` when the output holds the whole expected answer inside a longer text.
 *
 * Asked for as `correctness:judge`, the judge grades the output against the expected answer
 * instead: 1 fully correct, 0.5 partly, 0 wrong. Without an expected output the score
 * is null.
 */
export const correctness: Scorer = createCorrectness();

function compare(output: string, expected: string, tolerance: number): ScoreResult {
  const normalisedOutput = normaliseAnswer(output);
  const normalisedExpected = normaliseAnswer(expected);
  if (normalisedOutput === normalisedExpected) {
    return {
      score: 1,
      label: "exact",
      reason:
        "The output matches the expected answer once case, punctuation, accents and articles are ignored.",
    };
  }

  const numericAnswer = readNumericAnswer(expected);
  if (numericAnswer !== undefined) {
    const verdict = compareNumbers(output, numericAnswer, tolerance);
    if (verdict !== undefined) return verdict;
  }

  return compareTokens(output, expected, normalisedOutput, normalisedExpected);
}

/** The expected answer as a number, when it is one number with at most one other word. */
function readNumericAnswer(expected: string): NumericAnswer | undefined {
  const numbers = extractNumbers(expected);
  const [number] = numbers;
  if (number === undefined || numbers.length > 1) return undefined;
  const rest = words(foldUnicode(expected).replace(number.text, " ")).filter(
    (word) => !stopWords.has(word) && !currencyWords.has(word),
  );
  if (rest.length > 1) return undefined;
  const [unit] = rest;
  return { number, unit: unit === undefined ? undefined : stem(unit) };
}

function compareNumbers(
  output: string,
  { number: expected, unit }: NumericAnswer,
  tolerance: number,
): ScoreResult | undefined {
  const found = extractNumbers(output);
  const match = found.find((number) => sameNumber(number, expected, tolerance, absoluteTolerance));
  const unitStated = unit === undefined || words(output).some((word) => stem(word) === unit);
  if (match !== undefined && unitStated) {
    return {
      score: 1,
      label: "numeric",
      reason: `The output states ${match.text}, which equals the expected ${expected.text}.`,
    };
  }
  const distinct = found.filter(
    (number, index) =>
      found.findIndex((other) => sameNumber(other, number, tolerance, absoluteTolerance)) === index,
  );
  const [only] = distinct;
  if (match === undefined && distinct.length === 1 && only !== undefined) {
    return {
      score: 0,
      label: "incorrect",
      reason: `The expected answer is ${expected.text} but the output says ${only.text}.`,
    };
  }
  // The number is right with another unit, or the output lists several numbers: let the words
  // decide.
  return undefined;
}

function compareTokens(
  output: string,
  expected: string,
  normalisedOutput: string,
  normalisedExpected: string,
): ScoreResult {
  const outputTokens = answerTokens(output);
  const expectedTokens = answerTokens(expected);
  if (outputTokens.length === 0) {
    return { score: 0, label: "incorrect", reason: "The output is empty." };
  }
  const remaining = new Map<string, number>();
  for (const token of expectedTokens) remaining.set(token, (remaining.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of outputTokens) {
    const count = remaining.get(token) ?? 0;
    if (count > 0) {
      common += 1;
      remaining.set(token, count - 1);
    }
  }
  const missing = [...remaining].filter(([, count]) => count > 0).map(([token]) => token);
  const precision = common / outputTokens.length;
  const recall = expectedTokens.length === 0 ? 0 : common / expectedTokens.length;
  const f1 = common === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const overlap = `${common} of the output's ${outputTokens.length} words match the expected answer's ${expectedTokens.length} (token F1 ${f1.toFixed(2)})`;

  if (normalisedExpected !== "" && ` ${normalisedOutput} `.includes(` ${normalisedExpected} `)) {
    return {
      score: Math.max(f1, containmentFloor),
      label: "contains",
      reason: `The output contains the expected answer ${quote(expected)} within a longer text, which scores at least ${containmentFloor}; ${overlap}.`,
    };
  }
  if (f1 === 1) {
    return {
      score: 1,
      label: "reordered",
      reason: "The output has the same words as the expected answer, in another order.",
    };
  }
  if (f1 === 0) {
    return {
      score: 0,
      label: "incorrect",
      reason: `The output shares no word with the expected answer ${quote(expected)}.`,
    };
  }
  const missingWords =
    missing.length === 0
      ? "every expected word is there, among others"
      : `missing: ${missing
          .slice(0, 8)
          .map((token) => `"${token}"`)
          .join(", ")}${missing.length > 8 ? ` and ${missing.length - 8} more` : ""}`;
  return {
    score: f1,
    label: "partial",
    reason: `The output partly matches: ${overlap}; ${missingWords}.`,
  };
}
