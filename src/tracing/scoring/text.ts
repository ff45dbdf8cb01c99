// Text helpers shared by the built-in scorers: answer normalisation, words, sentences,
// numbers, content words and a light stemmer. English only.

/** NFKC-folds the text (full-width letters, ligatures, superscripts) and strips diacritics. */
export function foldUnicode(text: string): string {
  // Only the combining accents of Latin, Greek and Cyrillic: other scripts write vowels with
  // combining marks, and removing those would change the words.
  return text
    .normalize("NFKC")
    .normalize("NFD")
    .replace(/[\u0300-\u036f]+/gu, "")
    .normalize("NFC");
}

const articles: ReadonlySet<string> = new Set(["a", "an", "the"]);

/**
 * Normalises an answer for comparison, SQuAD style: Unicode folded, lowercased, punctuation
 * removed, articles (a, an, the) dropped and whitespace collapsed.
 *
 * Two departures from SQuAD keep numbers intact: thousands separators are dropped
 * (`1,234.5` → `1234.5`) and a decimal point between digits is kept, so `3.5` never becomes
 * `35`. Apostrophes are removed (`don't` → `dont`); other punctuation becomes a space, so
 * `refund/exchange` stays two words.
 */
export function normaliseAnswer(text: string): string {
  return foldUnicode(text)
    .toLowerCase()
    .replace(/(?<=\d),(?=\d{3}(?!\d))/gu, "")
    .replace(/['’‘`]/gu, "")
    .replace(/(?!(?<=\d)\.(?=\d))[\p{P}\p{S}]/gu, " ")
    .split(/\s+/u)
    .filter((word) => word !== "" && !articles.has(word))
    .join(" ");
}

/** The words of a normalised answer (see {@link normaliseAnswer}), for token-level F1. */
export function answerTokens(text: string): string[] {
  const normalised = normaliseAnswer(text);
  return normalised === "" ? [] : normalised.split(" ");
}

/** The words of a text: folded, lowercased, apostrophes removed, split on anything else. */
export function words(text: string): string[] {
  return foldUnicode(text)
    .toLowerCase()
    .replace(/['’‘`]/gu, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

// ─── Sentences ────────────────────────────────────────────────────────────────────────────

const sentenceSegmenter = new Intl.Segmenter("en", { granularity: "sentence" });

// Intl.Segmenter already keeps "e.g.", "i.e.", "U.S.", "p.m." and decimals inside their
// sentence, but ends a sentence after a title written before a name ("Dr. Smith").
const titleAbbreviation =
  /(?:^|[\s(])(?:mr|mrs|ms|mx|dr|prof|st|mt|rev|hon|gen|col|capt|lt|sgt|vs|approx|fig|cf|e\.g|i\.e)\.\s*$/iu;

const listMarker = /^\s*(?:[-*•·▪‣◦–—]|\(?\d{1,3}[.)]|\(?[a-z][)])\s+/iu;

/**
 * Splits a text into sentences. Line breaks and bullets end a sentence; list markers
 * (`- `, `1. `, `a) `) are dropped; abbreviations such as "e.g." and "Dr." and decimals such
 * as 3.5 do not end one.
 */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  const lines = text.split(/\r\n|[\r\n\u2028\u2029]|\s[•·▪]\s/u);
  for (const line of lines) {
    // A model sometimes drops the space after a full stop ("5 days.Items must…").
    const spaced = line.replace(/(?<=\p{Ll}[.!?])(?=\p{Lu}\p{Ll})/gu, " ");
    let pending = "";
    for (const { segment } of sentenceSegmenter.segment(spaced)) {
      pending += segment;
      if (titleAbbreviation.test(pending) || /^\s*\(?\d{1,3}[.)]\s*$/u.test(pending)) continue;
      pushSentence(sentences, pending);
      pending = "";
    }
    pushSentence(sentences, pending);
  }
  return sentences;
}

function pushSentence(sentences: string[], raw: string): void {
  const sentence = raw.replace(listMarker, "").replace(/\s+/gu, " ").trim();
  if (sentence !== "") sentences.push(sentence);
}

// ─── Numbers ──────────────────────────────────────────────────────────────────────────────

/** A number found in a text. */
export interface ExtractedNumber {
  /** The value, with thousands separators removed and a scale word applied (`1.2 million`). */
  readonly value: number;
  /** Whether it was written as a percentage (`15%`, `15 percent`); `value` is then 15. */
  readonly percent: boolean;
  /** The text it was read from. */
  readonly text: string;
}

// Number words from two to ninety-nine. "One" is left out: it is more often a pronoun ("the
// one I ordered") than a count.
const unitWords = "two three four five six seven eight nine".split(" ");
const teenWords =
  "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split(" ");
const tensWords = "twenty thirty forty fifty sixty seventy eighty ninety".split(" ");

const numberWordValues: ReadonlyMap<string, number> = new Map([
  ["one", 1],
  ...unitWords.map((word, index): [string, number] => [word, index + 2]),
  ...teenWords.map((word, index): [string, number] => [word, index + 10]),
  ...tensWords.map((word, index): [string, number] => [word, (index + 2) * 10]),
]);

// The lookbehind keeps digits inside words ("B2B", "mp3") and the tail of a version number
// ("2.0.1") out; a minus sign counts only when it does not join two words or numbers ("3-5").
const numberPattern = new RegExp(
  String.raw`(?<![\p{L}\p{N}.])(?:([-−])(?=\.?\d))?(` +
    String.raw`(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+` +
    String.raw`|(?:${tensWords.join("|")})(?:-(?:one|${unitWords.join("|")}))?(?![\p{L}\p{N}])` +
    String.raw`|(?:${[...unitWords, ...teenWords].join("|")})(?![\p{L}\p{N}])` +
    String.raw`)(\s*(?:%|percent\b|per cent\b))?(?:\s+(thousand|million|billion|trillion)\b)?`,
  "giu",
);

const scales: Readonly<Record<string, number>> = {
  thousand: 1e3,
  million: 1e6,
  billion: 1e9,
  trillion: 1e12,
};

/**
 * The numbers in a text: integers, decimals, thousands separators (`1,234.5`), negative
 * numbers (`-3`, `−3`), percentages (`15%`, `15 percent`), scale words (`1.2 million`) and
 * number words from two to ninety-nine (`five`, `twenty-five`).
 */
export function extractNumbers(text: string): ExtractedNumber[] {
  const numbers: ExtractedNumber[] = [];
  for (const match of foldUnicode(text).matchAll(numberPattern)) {
    const [whole, sign, digits = "", percentSuffix, scale] = match;
    const magnitude = readMagnitude(digits.toLowerCase());
    if (!Number.isFinite(magnitude)) continue;
    const scaled = magnitude * (scale === undefined ? 1 : (scales[scale.toLowerCase()] ?? 1));
    numbers.push({
      value: sign === undefined ? scaled : -scaled,
      percent: percentSuffix !== undefined,
      text: whole.trim(),
    });
  }
  return numbers;
}

function readMagnitude(digits: string): number {
  if (/^[\d.]/u.test(digits)) return Number(digits.replaceAll(",", ""));
  return digits
    .split("-")
    .reduce((sum, word) => sum + (numberWordValues.get(word) ?? Number.NaN), 0);
}

/**
 * Whether two numbers are equal within a relative tolerance (and an absolute one for values
 * near zero). A percentage also equals its fraction: `15%` matches `0.15`.
 */
export function sameNumber(
  a: ExtractedNumber,
  b: ExtractedNumber,
  relativeTolerance = 1e-6,
  absoluteTolerance = 1e-9,
): boolean {
  const close = (x: number, y: number) =>
    Math.abs(x - y) <=
    Math.max(absoluteTolerance, relativeTolerance * Math.max(Math.abs(x), Math.abs(y)));
  if (close(a.value, b.value)) return true;
  if (a.percent && !b.percent) return close(a.value / 100, b.value);
  if (b.percent && !a.percent) return close(a.value, b.value / 100);
  return false;
}

// ─── Content words ────────────────────────────────────────────────────────────────────────

// Function words plus a few light verbs ("get", "take", "make") that carry little meaning on
// their own. Negations ("not", "no", "never") are left out on purpose: they change a claim.
const stopWordList = `
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each either few for from
further get go had has have having he her here hers herself him himself his how i if in
into is it its itself just let make may me might more most must my myself of off on once
only or other our ours ourselves out over own same shall she should so some such take than
that the their theirs them themselves then there these they this those through to too
under until up upon us very was we were what when where whether which while who whom whose
why will with within would you your yours yourself yourselves got gets getting took taken
takes taking made makes making goes went gone going im ive youre youll youve hes shes
theyre theyll theyve weve thats theres whats lets
`
  .trim()
  .split(/\s+/u);

/** Common English function words, ignored when comparing the content of sentences. */
export const stopWords: ReadonlySet<string> = new Set(stopWordList);

/**
 * The stems of the content words of a text: stop words, single letters, numbers and number
 * words dropped (numbers are compared as values, see {@link extractNumbers}), the rest stemmed.
 */
export function contentStems(text: string): string[] {
  const stems: string[] = [];
  for (const word of words(text)) {
    // A lone letter is more often a split word ("e-mail") or a list marker than content.
    if (word.length < 2 || stopWords.has(word) || isNumberWord(word)) continue;
    stems.push(stem(word));
  }
  return stems;
}

function isNumberWord(word: string): boolean {
  return /^\d+$/u.test(word) || (numberWordValues.has(word) && word !== "one");
}

// ─── Stemming ─────────────────────────────────────────────────────────────────────────────

const vowel = /[aeiouy]/u;

/**
 * A light stemmer (the first steps of Porter's): strips plural `-s`/`-es`/`-ies`, `-ed`,
 * `-ing` and a final `-e`, so "refund", "refunds", "refunded" and "refunding" all give
 * "refund", and "charge", "charges", "charged" all give "charg". Expects a lowercase word.
 */
export function stem(word: string): string {
  // "use" must meet "used" and "using", and "fee" meet "fees".
  if (word.length <= 3) return word.length === 3 && word.endsWith("e") ? word.slice(0, -1) : word;
  let stemmed = word;

  if (stemmed.endsWith("sses")) stemmed = stemmed.slice(0, -2);
  else if (stemmed.endsWith("ies")) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (/(?:ss|us|is)$/u.test(stemmed)) {
    // "class", "status" and "analysis" are not plurals.
  } else if (stemmed.endsWith("s")) stemmed = stemmed.slice(0, -1);

  let strippedSuffix = false;
  if (stemmed.endsWith("eed")) {
    // The "ed" of "need" is no suffix; "agreed" loses only its "d" to meet "agree".
    if (stemmed.length > 4) stemmed = stemmed.slice(0, -1);
  } else if (stemmed.endsWith("ied") && stemmed.length > 4) {
    stemmed = `${stemmed.slice(0, -3)}y`;
  } else if (stemmed.endsWith("ed") && vowel.test(stemmed.slice(0, -2))) {
    stemmed = stemmed.slice(0, -2);
    strippedSuffix = true;
  } else if (stemmed.endsWith("ing") && stemmed.length > 4 && vowel.test(stemmed.slice(0, -3))) {
    stemmed = stemmed.slice(0, -3);
    strippedSuffix = true;
  }

  // "shipped" → "shipp" → "ship"; "billed" keeps its double l to meet "bill", and "added"
  // its double d to meet "add".
  if (strippedSuffix && stemmed.length > 3 && /([^aeiouylsz])\1$/u.test(stemmed))
    stemmed = stemmed.slice(0, -1);
  if (stemmed.length > 2 && stemmed.endsWith("e")) stemmed = stemmed.slice(0, -1);
  return stemmed;
}

// ─── Reasons ──────────────────────────────────────────────────────────────────────────────

/** Quotes a text for a reason, cut at a word boundary near `maximumLength` characters. */
export function quote(text: string, maximumLength = 120): string {
  const flat = text.replace(/\s+/gu, " ").trim();
  if (flat.length <= maximumLength) return `"${flat}"`;
  const cut = flat.slice(0, maximumLength);
  const lastSpace = cut.lastIndexOf(" ");
  return `"${(lastSpace > maximumLength / 2 ? cut.slice(0, lastSpace) : cut).trimEnd()}…"`;
}
