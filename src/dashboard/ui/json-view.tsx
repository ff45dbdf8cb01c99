// JSON as a tree a reader opens where they want: objects and arrays fold (buttons with
// aria-expanded; what is folded is not rendered), long lists show a hundred items at a time.
// Strings are shown as text, never as HTML.

import { useState } from "react";
import "./json-view.css";

/** Items of an array or object rendered before "Show more". */
const pageSize = 100;

export function JsonView(props: {
  value: unknown;
  /** Levels open at first: 2 by default. */
  openDepth?: number;
}) {
  return (
    <div className="dash-json">
      <JsonNode name={undefined} value={props.value} depth={0} openDepth={props.openDepth ?? 2} />
    </div>
  );
}

function JsonNode(props: {
  name: string | undefined;
  value: unknown;
  depth: number;
  openDepth: number;
}) {
  const { name, value, depth } = props;
  const [open, setOpen] = useState(depth < props.openDepth);
  const [shown, setShown] = useState(pageSize);
  const key = name === undefined ? null : <span className="dash-json-key">{name}: </span>;
  if (value === null || typeof value !== "object") {
    return (
      <div className="dash-json-line">
        {key}
        <Primitive value={value} />
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries: Array<[string, unknown]> = isArray
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  const summary = isArray
    ? `[${entries.length} ${entries.length === 1 ? "item" : "items"}]`
    : `{${entries.length} ${entries.length === 1 ? "key" : "keys"}}`;
  if (entries.length === 0) {
    return (
      <div className="dash-json-line">
        {key}
        <span className="dash-json-muted">{isArray ? "[]" : "{}"}</span>
      </div>
    );
  }
  return (
    <div className="dash-json-node">
      <button
        type="button"
        className="dash-json-toggle"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <span aria-hidden="true" className="dash-json-caret">
          {open ? "▾" : "▸"}
        </span>
        {key}
        <span className="dash-json-muted">{summary}</span>
      </button>
      {open ? (
        <div className="dash-json-children">
          {entries.slice(0, shown).map(([childName, child]) => (
            <JsonNode
              key={childName}
              name={childName}
              value={child}
              depth={depth + 1}
              openDepth={props.openDepth}
            />
          ))}
          {entries.length > shown ? (
            <button
              type="button"
              className="dash-json-more"
              onClick={() => setShown(shown + pageSize)}
            >
              Show {Math.min(pageSize, entries.length - shown)} more of {entries.length - shown}
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function Primitive(props: { value: unknown }) {
  const { value } = props;
  if (typeof value === "string") return <span className="dash-json-string">"{value}"</span>;
  if (typeof value === "number") return <span className="dash-json-number">{String(value)}</span>;
  return <span className="dash-json-literal">{String(value)}</span>;
}
