// Free-text search of traces (GET /analytics/traces?q=) over the FTS5 index of schema step 12:
// span names and the text of inputs, outputs and status messages (span-search-index.ts).

/** Longest search text taken, in characters. */
export const maxSearchChars = 500;
/** Most terms a search uses: the first ones typed. */
export const maxSearchTerms = 16;

/**
 * The FTS5 queries for what a person typed, one per term: each word, or each "quoted phrase",
 * becomes a quoted FTS5 string (a `"` inside doubled), so no character typed is ever FTS5
 * syntax, and matches the words it begins ("refund" finds "refunds"; a term of one or two
 * characters only itself). Terms without a letter or
 * a digit are left out; none left means the search matches nothing.
 */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.slice(0, maxSearchChars).matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const term = (match[1] ?? match[0]).trim();
    if (!/[\p{L}\p{N}]/u.test(term)) continue;
    // A word of one or two letters would begin too many others: it matches itself only.
    const prefix = [...term].length >= 3 ? "*" : "";
    terms.push(`"${term.replaceAll('"', '""')}"${prefix}`);
    if (terms.length === maxSearchTerms) break;
  }
  return terms;
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
