// Paging by the API's cursors: the next page, and back to the first. Each page is its own URL
// (the cursor is a search parameter), so the browser's Back button is the previous page.

import "./cursor-pager.css";

export function CursorPager(props: {
  /** The cursor of the page shown; undefined on the first. */
  cursor: string | undefined;
  /** The API's next_cursor: null on the last page. */
  next: string | null | undefined;
  onPage: (cursor: string | undefined) => void;
  /** What is paged, for the navigation's name: "Pages of sessions". */
  label: string;
}) {
  const { cursor, next, onPage } = props;
  if (cursor === undefined && (next === null || next === undefined)) return null;
  return (
    <nav className="dash-pager" aria-label={props.label}>
      {cursor === undefined ? null : (
        <button type="button" className="dash-button" onClick={() => onPage(undefined)}>
          First page
        </button>
      )}
      {next === null || next === undefined ? null : (
        <button type="button" className="dash-button" onClick={() => onPage(next)}>
          Next page
        </button>
      )}
    </nav>
  );
}
