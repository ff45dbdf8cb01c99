import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { visibleName } from "../client/names.js";
import type { FileManagerActions } from "./actions.js";
import type { FileManagerStore } from "./file-manager-store.js";
import { FolderIcon } from "./icons.js";
import { isTypeaheadKey, TypeaheadBuffer, typeaheadIndex } from "./typeahead.js";
import type { TreeRow } from "./types.js";
import { useStoreCell } from "./use-file-manager.js";

/**
 * The folders, as a WAI-ARIA tree (flat items with level, set size and position): arrows move,
 * Right opens a folder then enters it, Left closes it then goes to its parent, Home/End,
 * Enter shows the folder, typing jumps to a name. Folders load when first opened.
 */
export function FolderTree({
  store,
  actions,
}: {
  readonly store: FileManagerStore;
  readonly actions: FileManagerActions;
}) {
  const rows = useStoreCell(store.tree);
  const current = useStoreCell(store.path);
  const [focused, setFocused] = useState<string | undefined>();
  const [dropTarget, setDropTarget] = useState<string | undefined>();
  const [typeahead] = useState(() => new TypeaheadBuffer());
  const items = useRef(new Map<string, HTMLElement>());
  const wantFocus = useRef(false);

  const active =
    focused !== undefined && rows.some((row) => row.path === focused)
      ? focused
      : rows.some((row) => row.path === current)
        ? current
        : store.root;
  const activeIndex = rows.findIndex((row) => row.path === active);

  useEffect(() => {
    if (!wantFocus.current) return;
    wantFocus.current = false;
    items.current.get(active)?.focus();
  });

  const focusRow = (row: TreeRow | undefined) => {
    if (row === undefined) return;
    wantFocus.current = true;
    setFocused(row.path);
    items.current.get(row.path)?.focus();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const row = rows[activeIndex];
    if (row === undefined || event.altKey || event.ctrlKey || event.metaKey) return;
    const openable = row.hasChildren !== false;
    let handled = true;
    switch (event.key) {
      case "ArrowDown":
        focusRow(rows[activeIndex + 1]);
        break;
      case "ArrowUp":
        focusRow(rows[activeIndex - 1]);
        break;
      case "Home":
        focusRow(rows[0]);
        break;
      case "End":
        focusRow(rows[rows.length - 1]);
        break;
      case "ArrowRight":
        if (!row.expanded && openable) store.expand(row.path);
        else if (row.expanded && rows[activeIndex + 1]?.level === row.level + 1) {
          focusRow(rows[activeIndex + 1]);
        }
        break;
      case "ArrowLeft":
        if (row.expanded && openable && row.level > 1) store.collapse(row.path);
        else
          focusRow(rows.slice(0, activeIndex).findLast((above) => above.level === row.level - 1));
        break;
      case "Enter":
      case " ":
        store.navigate(row.path);
        if (openable) store.expand(row.path);
        break;
      default: {
        handled = false;
        if (!isTypeaheadKey(event)) break;
        const index = typeaheadIndex(
          rows.map((candidate) => candidate.name),
          activeIndex,
          typeahead.push(event.key),
        );
        if (index >= 0) {
          handled = true;
          focusRow(rows[index]);
        }
      }
    }
    if (handled) event.preventDefault();
  };

  return (
    <div role="tree" aria-label="Folders" className="cairn-fm-tree" onKeyDown={onKeyDown}>
      {rows.map((row) => (
        // biome-ignore lint/a11y/useKeyWithClickEvents: the tree takes the keys for its items (Enter, arrows)
        <div
          key={row.path}
          ref={(element) => {
            if (element === null) items.current.delete(row.path);
            else items.current.set(row.path, element);
          }}
          role="treeitem"
          aria-level={row.level}
          aria-setsize={row.setSize}
          aria-posinset={row.posInSet}
          aria-expanded={row.hasChildren === false ? undefined : row.expanded}
          aria-selected={row.path === current}
          aria-busy={row.loading || undefined}
          tabIndex={row.path === active ? 0 : -1}
          className="cairn-fm-treeitem"
          data-drop-target={dropTarget === row.path || undefined}
          style={{ paddingInlineStart: `${(row.level - 1) * 14 + 4}px` }}
          onFocus={() => setFocused(row.path)}
          onClick={() => {
            setFocused(row.path);
            store.navigate(row.path);
            if (row.hasChildren !== false) store.expand(row.path);
          }}
          onDragOver={(event) => {
            if (!actions.canDrop(row.path, event.dataTransfer)) return;
            event.preventDefault();
            setDropTarget(row.path);
          }}
          onDragLeave={() => setDropTarget(undefined)}
          onDrop={(event) => {
            event.preventDefault();
            setDropTarget(undefined);
            actions.drop(row.path, event.dataTransfer);
          }}
        >
          <span
            className="cairn-fm-twisty"
            aria-hidden="true"
            data-open={row.expanded || undefined}
            data-leaf={row.hasChildren === false || undefined}
            onClick={(event) => {
              event.stopPropagation();
              if (row.expanded) store.collapse(row.path);
              else store.expand(row.path);
            }}
          />
          <FolderIcon open={row.expanded} />
          <span className="cairn-fm-name">{visibleName(row.name)}</span>
        </div>
      ))}
    </div>
  );
}
