import type { SearchTerm } from "../trace-search.js";
import type { PostgresSql } from "./connection.js";

// The trace search's terms (trace-search.ts) as regular expressions over the text of a search
// document (span_search_docs, initial-schema.ts: its spans' cairn_span_search_text), matching what SQLite's FTS5 index with the
// unicode61 tokenizer matches: a term is the phrase of its words (letters and digits; anything
// else between them), each folded as the text is (lower case, no accents), the words one after
// the other with only other characters between, the first at the start of a word, and the last
// at the end of one too unless the term matches the words it begins.

const separator = "[^[:alnum:]]";
const word = /[\p{L}\p{N}\p{M}]+/gu;
const regexCharacter = /[\\^$.*+?()[\]{}|-]/g;
const likeCharacter = /[\\%_]/g;
/** What a term whose words fold to nothing matches. */
const nothing = "[^\\s\\S]";

/**
 * How a document's text (span_search_docs.text) holds a term: `pattern`, to match with `~`, and
 * a LIKE pattern per word, which it must hold too: those are quick to test, and pg_trgm's index
 * takes them.
 */
export interface TermMatch {
  readonly pattern: string;
  readonly likes: readonly string[];
}

/** How a document holds each term. */
export async function searchPatterns(
  sql: PostgresSql,
  terms: readonly SearchTerm[],
): Promise<TermMatch[]> {
  const words = terms.map((term) => term.text.match(word) ?? []);
  const rows = await sql<Array<{ folded: string }>>`
    SELECT cairn_search_fold(word) AS folded
    FROM unnest(${words.flat()}::text[]) WITH ORDINALITY AS w (word, position)
    ORDER BY position`;
  const folded = rows.map((row) => row.folded);
  return terms.map((term, index) => {
    const termWords = folded.splice(0, words[index]?.length ?? 0).filter((each) => each !== "");
    if (termWords.length === 0) return { pattern: nothing, likes: [] };
    const escaped = termWords.map((each) => each.replace(regexCharacter, "\\$&"));
    const end = term.prefix ? "" : `(${separator}|$)`;
    return {
      pattern: `(^|${separator})${escaped.join(`${separator}+`)}${end}`,
      likes: termWords.map((each) => `%${each.replace(likeCharacter, "\\$&")}%`),
    };
  });
}
