// Above the span tree: find spans by name (matches marked, or only they shown, and stepped
// through), and open or close every subtree at once.

import { useEffect, useState } from "react";

export function TraceToolbar(props: {
  find: string;
  setFind: (text: string) => void;
  /** How many spans match; undefined without a search. */
  matchCount: number | undefined;
  only: boolean;
  setOnly: (only: boolean) => void;
  onMatch: (step: 1 | -1) => void;
  onExpandAll: () => void;
  onCollapseAll: () => void;
}) {
  const { find, setFind, matchCount } = props;
  // Typed text shows at once; the URL (and the tree's marks) follow a moment later.
  const [text, setText] = useState(find);
  useEffect(() => setText(find), [find]);
  useEffect(() => {
    if (text === find) return undefined;
    const timer = setTimeout(() => setFind(text), 200);
    return () => clearTimeout(timer);
  }, [text, find, setFind]);
  const none = matchCount === undefined || matchCount === 0;
  return (
    <div className="trace-toolbar">
      <label className="dash-field trace-find">
        <span>Find in trace</span>
        <input
          type="search"
          value={text}
          placeholder="span name, kind, model"
          onChange={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key !== "Enter") return;
            event.preventDefault();
            if (text !== find) setFind(text);
            props.onMatch(event.shiftKey ? -1 : 1);
          }}
        />
      </label>
      <span className="trace-match-count" role="status">
        {matchCount === undefined
          ? ""
          : `${matchCount.toLocaleString("en")} ${matchCount === 1 ? "match" : "matches"}`}
      </span>
      <button
        type="button"
        className="dash-button"
        disabled={none}
        aria-label="Previous match"
        onClick={() => props.onMatch(-1)}
      >
        Previous
      </button>
      <button
        type="button"
        className="dash-button"
        disabled={none}
        aria-label="Next match"
        onClick={() => props.onMatch(1)}
      >
        Next
      </button>
      <label className="trace-only">
        <input
          type="checkbox"
          checked={props.only}
          disabled={matchCount === undefined}
          onChange={(event) => props.setOnly(event.currentTarget.checked)}
        />{" "}
        Only matches
      </label>
      <span className="trace-toolbar-end">
        <button type="button" className="dash-button" onClick={props.onExpandAll}>
          Expand all
        </button>
        <button type="button" className="dash-button" onClick={props.onCollapseAll}>
          Collapse all
        </button>
      </span>
    </div>
  );
}
