// Paging the trace list by the API's cursors. Each page is its own URL: the cursor, and the
// cursors of the pages before it (back), so that "Newer" goes back a page as Back would.

import type { UrlParamChanges } from "../../url-state.js";
import type { TraceView } from "./trace-view.js";

export function TracePager(props: {
  view: TraceView;
  /** The API's next_cursor: null on the last page. */
  next: string | null;
  change: (changes: UrlParamChanges) => void;
}) {
  const { view, next, change } = props;
  const first = view.cursor === undefined;
  if (first && next === null) return null;
  const byTime = view.sort === "time" && view.order === "desc";
  const toPrevious = () => {
    const back = view.back.slice(0, -1);
    change({ cursor: view.back.at(-1) ?? null, back: back.length === 0 ? null : back.join(",") });
  };
  const toNext = () => {
    if (next === null) return;
    change({ cursor: next, back: [...view.back, view.cursor ?? ""].join(",") });
  };
  return (
    <nav className="traces-pager" aria-label="Pages of traces">
      <button type="button" className="dash-button" disabled={first} onClick={toPrevious}>
        {byTime ? "Newer" : "Previous page"}
      </button>
      <button type="button" className="dash-button" disabled={next === null} onClick={toNext}>
        {byTime ? "Older" : "Next page"}
      </button>
    </nav>
  );
}
