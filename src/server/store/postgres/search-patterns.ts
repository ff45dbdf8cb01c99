import type { SearchTerm } from "../trace-search.js";
import type { PostgresSql } from "./connection.js";

// The trace search's terms (trace-search.ts) as regular expressions over a span's search text
// (initial-schema.ts, cairn_span_search_text), matching what SQLite's FTS5 index with the
// unicode61 tokenizer matches: a term is the phrase of its words (letters and digits; anything
// else between them), each folded as the text is (lower case, no accents), the words one after
// the other with only other characters between, the first at the start of a word, and the last
// at the end of one too unless the term matches the words it begins.

const separator = "[^[:alnum:]]";
const word = /[\p{L}\p{N}\p{M}]+/gu;
const regexCharacter = /[\\^$.*+?()[\]{}|-]/g;
/** What a term whose words fold to nothing matches. */
const nothing = "[^\\s\\S]";

/** One pattern per term, for `cairn_span_search_text(…) ~ pattern`. */
export async function searchPatterns(
  sql: PostgresSql,
  terms: readonly SearchTerm[],
): Promise<string[]> {
  const words = terms.map((term) => term.text.match(word) ?? []);
  const rows = await sql<Array<{ folded: string }>>`
    SELECT cairn_search_fold(word) AS folded
    FROM unnest(${words.flat()}::text[]) WITH ORDINALITY AS w (word, position)
    ORDER BY position`;
  const folded = rows.map((row) => row.folded);
  return terms.map((term, index) => {
    const escaped = folded
      .splice(0, words[index]?.length ?? 0)
      .filter((each) => each !== "")
      .map((each) => each.replace(regexCharacter, "\\$&"));
    if (escaped.length === 0) return nothing;
    const end = term.prefix ? "" : `(${separator}|$)`;
    return `(^|${separator})${escaped.join(`${separator}+`)}${end}`;
  });
}
