// Free-text search of traces (GET /analytics/traces?q=) over the FTS5 index of schema step 12:
// span names and the text of inputs, outputs and status messages (span-search-index.ts).

/** Longest search text taken, in characters. */
export const maxSearchChars = 500;
/**
 * The most spans a search indexes before it runs (SQLite: about 10 µs each), so that it finds
 * what was just stored.
 */
export const searchCatchUpSpans = 20_000;
/** Most terms a search uses: the first ones typed. */
export const maxSearchTerms = 16;

/** A term of a search: its text, and whether it also matches the words it begins. */
export interface SearchTerm {
  readonly text: string;
  readonly prefix: boolean;
}

/**
 * The terms of what a person typed: each word, or each "quoted phrase", that has a letter or
 * a digit, the first {@link maxSearchTerms}. A term of three characters or more also matches
 * the words it begins ("refund" finds "refunds"); a shorter one only itself.
 */
export function searchTermsOf(text: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  // A NUL separates words, as in the text searched (FTS5 would end its query there).
  const typed = text.slice(0, maxSearchChars).replaceAll("\0", " ");
  for (const match of typed.matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const term = (match[1] ?? match[0]).trim();
    if (!/[\p{L}\p{N}]/u.test(term)) continue;
    // A word of one or two letters would begin too many others: it matches itself only.
    terms.push({ text: term, prefix: [...term].length >= 3 });
    if (terms.length === maxSearchTerms) break;
  }
  return terms;
}

/**
 * The FTS5 queries for what a person typed, one per term ({@link searchTermsOf}): each a quoted
 * FTS5 string (a `"` inside doubled), so no character typed is ever FTS5 syntax, with `*` when
 * it matches the words it begins. None means the search matches nothing.
 */
export function searchTerms(text: string): string[] {
  return searchTermsOf(text).map(
    (term) => `"${term.text.replaceAll('"', '""')}"${term.prefix ? "*" : ""}`,
  );
}

/**
 * The distinct ids (`trace_id`) of a project's traces that hold every one of `count` terms,
 * each in any of their spans. Binds each term followed by the project id.
 */
export function matchingTracesSql(count: number): string {
  const one = `SELECT DISTINCT d.trace_id FROM span_search s JOIN span_search_docs d ON d.id = s.rowid
    WHERE span_search MATCH ? AND d.project_id = ?`;
  return `(${Array.from({ length: count }, () => one).join(" INTERSECT ")})`;
}
