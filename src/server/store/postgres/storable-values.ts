// What PostgreSQL cannot store, and SQLite can: a NUL character in text, and in jsonb a "\u0000"
// escape or a lone surrogate ("\ud800" alone), which JSON.stringify writes for such strings.
// The wire accepts them, so that a span is never refused for a character: here each becomes
// U+FFFD, as UTF-8 turns a lone surrogate of a text column into on either engine. A value a
// query looks for goes through the same, so that it finds what was stored.

const replacement = "\uFFFD";

/** A JSON text's escapes of a NUL or of a surrogate (a lone one among them), quickly found. */
const suspectEscape = /\\u(?:0000|d[89a-f])/i;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as a PostgreSQL text column keeps it: NUL characters become U+FFFD. */
export function storableText<T extends string | null | undefined>(text: T): T {
  if (typeof text !== "string" || !text.includes("\0")) return text;
  return text.replaceAll("\0", replacement) as T;
}

/**
 * JSON text (JSON.stringify's) as a jsonb column takes it: strings and keys with a NUL or a
 * lone surrogate have U+FFFD in their place. Most text has neither and is returned as it is.
 */
export function storableJson(json: string): string {
  return suspectEscape.test(json) ? JSON.stringify(jsonbValue(JSON.parse(json), false)) : json;
}

/**
 * A JSON value as jsonb gives it back: U+FFFD for each NUL and lone surrogate of its strings
 * and keys, and the keys of every object in one order (sorted), since jsonb keeps none. Two
 * values compared by their JSON text must both be in this form.
 */
export function canonicalJsonValue(value: unknown): unknown {
  return jsonbValue(value, true);
}

function jsonbValue(value: unknown, sortKeys: boolean): unknown {
  if (typeof value === "string") return jsonbString(value);
  if (Array.isArray(value)) return value.map((item) => jsonbValue(item, sortKeys));
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).map(
    ([key, item]) => [jsonbString(key), jsonbValue(item, sortKeys)] as const,
  );
  if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

function jsonbString(text: string): string {
  return storableText(text).replace(loneSurrogate, replacement);
}
