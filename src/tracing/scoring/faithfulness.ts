import { ConfigurationError } from "../../core/errors/index.js";
import {
  contentStems,
  type ExtractedNumber,
  extractNumbers,
  quote,
  sameNumber,
  splitSentences,
  stem,
  words,
} from "./text.js";
import type { ScoreResult, Scorer } from "./types.js";

/** Options of {@link createFaithfulness}. */
export interface FaithfulnessOptions {
  /**
   * Share of a sentence's content words (stemmed) that must appear in one passage of a
   * document for the sentence to count as supported, without a judge. Default 0.7.
   */
  readonly coverageThreshold?: number;
}

const maximumNamed = 5;

const judgeRubric = `Decide whether the OUTPUT is faithful to the CONTEXT documents, ignoring what you know yourself.
1. Break the output into its individual factual claims. Leave out greetings, offers to help and sentences that claim nothing.
2. For each claim, decide whether the documents support it: stated, or directly implied. A claim the documents do not mention, or that contradicts them, is unsupported; so is a number, date or name that differs from the documents.
3. Score = supported claims / all claims (1 when the output makes no claim).
In the reason, quote every unsupported claim (say which contradict the documents), or say that every claim is supported.`;

// Conversational filler: a sentence made only of these words ("Hope this helps!", "Let me
// know if you have other questions.", "Based on the documents, here is what I found:") claims
// nothing a document could support, and "Happy to help: refunds take 5 days" should be judged
// on its refund words alone.
const fillerStems: ReadonlySet<string> = new Set(
  contentStems(
    `sure certainly absolutely course happy glad hope help helps helpful thanks thank welcome
    hello hi hey great question questions know anything else feel free ask okay ok please
    let assist yes note sorry unfortunately afraid unsure information answer based according
    following summary below provided document documents context found`,
  ),
);

// A negated claim ("Refunds are not available") needs a negation in the passage that supports
// it, or one word would flip its meaning unseen; a sentence with nothing but a negation
// ("I'm not sure.", "I don't know.") is an abstention, not a claim. Matched as words, since
// stems collide ("note" and "not").
const negationWords: ReadonlySet<string> = new Set(
  words("not no never dont cannot cant wont isnt arent doesnt didnt non nor neither none nothing"),
);
const negationStems: ReadonlySet<string> = new Set([...negationWords].map(stem));

interface Passage {
  readonly stems: ReadonlySet<string>;
  readonly negated: boolean;
  readonly numbers: readonly ExtractedNumber[];
}

interface Claim {
  readonly sentence: string;
  readonly stems: readonly string[];
  readonly negated: boolean;
  readonly numbers: readonly ExtractedNumber[];
}

/**
 * Creates a `faithfulness` scorer with its own options.
 *
 * @example
 * ```ts
 * const strictFaithfulness = createFaithfulness({ coverageThreshold: 0.9 });
 * ```
 */
export function createFaithfulness(options: FaithfulnessOptions = {}): Scorer {
  const threshold = options.coverageThreshold ?? 0.7;
  if (!Number.isFinite(threshold) || threshold <= 0 || threshold > 1) {
    throw new ConfigurationError(
      `faithfulness: coverageThreshold must be a number above 0 and at most 1, got ${String(threshold)}`,
    );
  }
  return (input, context) => {
    const documents = (input.context ?? []).filter((document) => document.trim() !== "");
    if (documents.length === 0) {
      return {
        score: null,
        reason:
          "Faithfulness checks the output against the documents it should rest on, and there were none: score a trace whose retrieval spans returned documents, or pass them as `context`.",
      };
    }
    if (context.judge !== undefined) {
      return context.judge.grade({
        name: "faithfulness",
        rubric: judgeRubric,
        input: input.input,
        output: input.output,
        context: documents,
      });
    }
    return checkClaims(input.output, documents, threshold);
  };
}

/**
 * Whether each sentence of the output is supported by the documents in `context` (the
 * passages a retrieval step returned). Score = supported sentences / sentences that claim
 * something; labels `"faithful"` (1), `"partially_faithful"`, `"unfaithful"` (0). The reason
 * quotes the unsupported sentences.
 *
 * Without a judge a sentence is supported when at least 70% of its content words (stemmed)
 * and every number in it appear in one passage of a document (a sentence and its neighbours).
 * Asked for as `faithfulness:judge`, the judge splits the output into claims and checks each. Without documents the score is null.
 */
export const faithfulness: Scorer = createFaithfulness();

function checkClaims(output: string, documents: readonly string[], threshold: number): ScoreResult {
  const passages = documents.flatMap(toPassages);
  const claims = splitSentences(output)
    .map((sentence): Claim => {
      const stems = unique(contentStems(sentence)).filter((stemmed) => !fillerStems.has(stemmed));
      return { sentence, stems, negated: isNegated(sentence), numbers: extractNumbers(sentence) };
    })
    .filter(
      (claim) =>
        claim.numbers.length > 0 || claim.stems.some((stemmed) => !negationStems.has(stemmed)),
    );

  if (claims.length === 0) {
    return {
      score: null,
      reason: "The output makes no claim to check against the documents.",
    };
  }

  const unsupported = claims.filter(
    (claim) => !passages.some((passage) => supports(passage, claim, threshold)),
  );
  const supportedCount = claims.length - unsupported.length;
  const score = supportedCount / claims.length;
  const counts = `${supportedCount} of ${claims.length} ${claims.length === 1 ? "sentence" : "sentences"} that make a claim`;

  if (unsupported.length === 0) {
    return { score, label: "faithful", reason: `The documents support ${counts}.` };
  }
  const named = unsupported
    .slice(0, maximumNamed)
    .map((claim) => quote(claim.sentence))
    .join("; ");
  const more =
    unsupported.length > maximumNamed ? ` and ${unsupported.length - maximumNamed} more.` : "";
  return {
    score,
    label: score === 0 ? "unfaithful" : "partially_faithful",
    reason: `The documents support ${counts}. Not found in them: ${named}${more}`,
  };
}

/** A document cut into overlapping passages: each sentence with its neighbour on each side. */
function toPassages(document: string): Passage[] {
  const sentences = splitSentences(document);
  if (sentences.length <= 3) return [passage(sentences.join(" "))];
  return sentences.map((_, index) =>
    passage(sentences.slice(Math.max(0, index - 1), index + 2).join(" ")),
  );
}

function passage(text: string): Passage {
  return {
    stems: new Set(contentStems(text)),
    negated: isNegated(text),
    numbers: extractNumbers(text),
  };
}

function isNegated(text: string): boolean {
  return words(text).some((word) => negationWords.has(word));
}

function supports(passage: Passage, claim: Claim, threshold: number): boolean {
  if (claim.negated && !passage.negated) return false;
  const numbersFound = claim.numbers.every((number) =>
    passage.numbers.some((other) => sameNumber(number, other)),
  );
  if (!numbersFound) return false;
  if (claim.stems.length === 0) return true;
  const covered = claim.stems.filter((stemmed) => passage.stems.has(stemmed)).length;
  return covered / claim.stems.length >= threshold;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
