// biome-ignore-all lint/a11y/useSemanticElements: a virtualized tree positions its rows itself
// biome-ignore-all lint/a11y/useFocusableInteractive: the tree's one tab stop is its focused row (roving tabindex); the others are reached with the arrows
// biome-ignore-all lint/a11y/useKeyWithClickEvents: the tree handles its keys on the tree element, for every row

// The spans of a trace as a WAI-ARIA tree beside a waterfall: each row a span (indented by depth,
// its kind in words, its name, its duration) and a bar placed by its start and length in the
// trace. Virtualized: only the rows in sight are in the page (and the focused one, so the tab
// stop never goes). Keys as React Aria's tree: Up and Down move, Right opens or goes to the first
// child, Left closes or goes to the parent, Home and End, Page Up and Down; Enter or Space
// selects. Focus moves; the selection (the span shown beside) moves on Enter or a click.

import { defaultRangeExtractor, useVirtualizer } from "@tanstack/react-virtual";
import {
  type KeyboardEvent,
  type ReactNode,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
} from "react";
import { formatDuration } from "../../format.js";
import { type FlatTree, hasChildren } from "./flat-tree.js";

export const rowHeight = 28;
const pageRows = 15;

export interface SpanTreeProps {
  readonly tree: FlatTree;
  /** The span indexes shown, in order (flat-tree.ts visibleRows). */
  readonly rows: Int32Array;
  readonly collapsed: ReadonlySet<number>;
  readonly setExpanded: (index: number, expanded: boolean) => void;
  /** The span with the tab stop; moved by keys, clicks and the search's next match. */
  readonly focused: number;
  readonly setFocused: (index: number) => void;
  /** Set when a key moved the focus: the row takes the DOM focus, not only the tab stop. */
  readonly focusRequest: { current: boolean };
  readonly selected: number;
  readonly onSelect: (index: number) => void;
  /** Spans matching the search (1 at their index), and the text to mark in their names. */
  readonly matches: Uint8Array | undefined;
  readonly find: string;
}

export function SpanTree(props: SpanTreeProps) {
  const { tree, rows, collapsed, focused, selected, matches } = props;
  const scroller = useRef<HTMLDivElement>(null);

  // Where each span is among the rows shown, -1 when hidden.
  const positions = useMemo(() => {
    const found = new Int32Array(tree.spans.length).fill(-1);
    for (let row = 0; row < rows.length; row++) found[rows[row] as number] = row;
    return found;
  }, [tree, rows]);
  const focusedRow = focused >= 0 ? (positions[focused] ?? -1) : -1;
  const tabRow = focusedRow >= 0 ? focusedRow : rows.length > 0 ? 0 : -1;

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 12,
    rangeExtractor: (range) => {
      const indexes = defaultRangeExtractor(range);
      if (tabRow >= 0 && !indexes.includes(tabRow)) {
        indexes.push(tabRow);
        indexes.sort((a, b) => a - b);
      }
      return indexes;
    },
  });

  // The focused row in sight (a key, the search's next match, the selection from the URL).
  useEffect(() => {
    if (focusedRow >= 0) virtualizer.scrollToIndex(focusedRow, { align: "auto" });
  }, [focusedRow, virtualizer]);
  useLayoutEffect(() => {
    if (!props.focusRequest.current || tabRow < 0) return;
    props.focusRequest.current = false;
    scroller.current
      ?.querySelector<HTMLElement>(`[data-row="${tabRow}"]`)
      ?.focus({ preventScroll: true });
  });

  const spanAt = (row: number) => rows[Math.max(0, Math.min(rows.length - 1, row))] as number;
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (rows.length === 0 || event.altKey || event.ctrlKey || event.metaKey) return;
    const current = tabRow;
    const index = rows[current] as number;
    const open = hasChildren(tree, index) && !collapsed.has(index);
    let target: number | undefined;
    switch (event.key) {
      case "ArrowDown":
        target = spanAt(current + 1);
        break;
      case "ArrowUp":
        target = spanAt(current - 1);
        break;
      case "Home":
        target = spanAt(0);
        break;
      case "End":
        target = spanAt(rows.length - 1);
        break;
      case "PageDown":
        target = spanAt(current + pageRows);
        break;
      case "PageUp":
        target = spanAt(current - pageRows);
        break;
      case "ArrowRight":
        if (!hasChildren(tree, index)) break;
        if (open) target = spanAt(current + 1);
        else props.setExpanded(index, true);
        break;
      case "ArrowLeft": {
        const parent = tree.parent[index] as number;
        if (open) props.setExpanded(index, false);
        else if (parent >= 0 && (positions[parent] ?? -1) >= 0) target = parent;
        break;
      }
      case "Enter":
      case " ":
        props.onSelect(index);
        break;
      default:
        return;
    }
    event.preventDefault();
    if (target !== undefined && target !== index) {
      props.focusRequest.current = true;
      props.setFocused(target);
    }
  };

  const find = props.find.toLowerCase();
  return (
    <div
      ref={scroller}
      className="trace-tree"
      role="tree"
      aria-label="Spans"
      style={{ height: virtualizer.getTotalSize() }}
      onKeyDown={onKeyDown}
    >
      <div role="presentation" style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {virtualizer.getVirtualItems().map((item) => {
          const index = rows[item.index] as number;
          const span = tree.spans[index];
          if (span === undefined) return null;
          const parentOf = hasChildren(tree, index);
          const offset = tree.offsetMs[index] as number;
          const duration = tree.durationMs[index] as number;
          const left = (offset / tree.totalMs) * 100;
          const width = Math.max((duration / tree.totalMs) * 100, 0.15);
          const failed = span.status === "error";
          return (
            <div
              key={index}
              role="treeitem"
              data-row={item.index}
              id={`span-${span.span_id}`}
              className="trace-row"
              aria-level={(tree.depth[index] as number) + 1}
              aria-posinset={tree.position[index]}
              aria-setsize={tree.siblings[index]}
              aria-expanded={parentOf ? !collapsed.has(index) : undefined}
              aria-selected={index === selected}
              tabIndex={item.index === tabRow ? 0 : -1}
              data-match={matches?.[index] === 1 ? "" : undefined}
              data-status={failed ? "error" : undefined}
              style={{ transform: `translateY(${item.start}px)`, height: rowHeight }}
              onClick={() => {
                props.setFocused(index);
                props.onSelect(index);
              }}
            >
              <span
                className="trace-row-label"
                style={{ paddingLeft: (tree.depth[index] as number) * 14 }}
              >
                <span
                  className="trace-toggle"
                  aria-hidden="true"
                  onClick={(event) => {
                    if (!parentOf) return;
                    event.stopPropagation();
                    props.setFocused(index);
                    props.setExpanded(index, collapsed.has(index));
                  }}
                >
                  {parentOf ? (collapsed.has(index) ? "▸" : "▾") : ""}
                </span>
                <span className="trace-kind" data-kind={span.kind}>
                  {span.kind}
                </span>
                <span className="trace-row-name">{marked(span.name, find)}</span>
                {failed ? <span className="trace-row-error">error</span> : null}
              </span>
              <span className="trace-row-duration">{formatDuration(duration)}</span>
              <span className="trace-row-track" aria-hidden="true">
                <span
                  className="trace-bar"
                  data-kind={span.kind}
                  data-status={failed ? "error" : undefined}
                  style={{ left: `${Math.min(left, 99.85)}%`, width: `${width}%` }}
                />
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}

/** The name with the first occurrence of the search marked. */
function marked(name: string, find: string): ReactNode {
  if (find === "") return name;
  const at = name.toLowerCase().indexOf(find);
  if (at < 0) return name;
  return (
    <>
      {name.slice(0, at)}
      <mark>{name.slice(at, at + find.length)}</mark>
      {name.slice(at + find.length)}
    </>
  );
}
