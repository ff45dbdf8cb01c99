// biome-ignore-all lint/a11y/useSemanticElements: a virtualized grid positions its rows itself; table layout would fight it
// biome-ignore-all lint/a11y/useFocusableInteractive: the grid's one tab stop is its active item (roving tabindex); the others are reached with the arrows
import { defaultRangeExtractor, observeElementRect, useVirtualizer } from "@tanstack/react-virtual";
import {
  type DragEvent,
  type KeyboardEvent,
  type MouseEvent,
  type RefObject,
  useEffect,
  useRef,
  useState,
} from "react";
import type { FileEntry } from "../client/files.js";
import { visibleName } from "../client/names.js";
import type { FileManagerActions } from "./actions.js";
import type { FileManagerStore, SelectMode } from "./file-manager-store.js";
import { formatDate, formatSize } from "./format.js";
import { FileIcon, FolderIcon } from "./icons.js";
import { baseName } from "./paths.js";
import { RenameInput } from "./rename-input.js";
import { isTypeaheadKey, TypeaheadBuffer, typeaheadIndex } from "./typeahead.js";
import { useStoreCell } from "./use-file-manager.js";

const rowHeight = 32;
const tileWidth = 120;
const tileHeight = 112;
/** Without layout (a test DOM, a hidden parent) the viewport is taken as this size. */
const fallbackRect = { width: 640, height: 480 };

export interface FileViewProps {
  readonly store: FileManagerStore;
  readonly actions: FileManagerActions;
  /** Set by the view: brings the focus back to its active item (after a dialog or menu). */
  readonly focusRef: RefObject<(() => void) | undefined>;
}

/**
 * The current folder's entries: a WAI-ARIA grid, as a list (name, size, modified) or as tiles,
 * virtualized, with a roving tab stop on the active item.
 */
export function FileView({ store, actions, focusRef }: FileViewProps) {
  const path = useStoreCell(store.path);
  const listing = useStoreCell(store.listing(path));
  const entries = useStoreCell(store.entries);
  const selection = useStoreCell(store.selection);
  const focus = useStoreCell(store.focus);
  const view = useStoreCell(store.view);
  const sort = useStoreCell(store.sort);
  const renaming = useStoreCell(store.renaming);
  const clipboard = useStoreCell(store.clipboard);
  const scrollRef = useRef<HTMLDivElement>(null);
  const wantFocus = useRef(false);
  const [typeahead] = useState(() => new TypeaheadBuffer());
  const [width, setWidth] = useState(0);
  const [dropTarget, setDropTarget] = useState<string | undefined>();
  const [, setFocusTick] = useState(0);

  const grid = view === "grid";
  const columns = grid ? Math.max(1, Math.floor((width || fallbackRect.width) / tileWidth)) : 1;
  const found = store.indexOf(focus);
  const activeIndex = entries.length === 0 ? -1 : found >= 0 ? found : 0;
  const activeRow = activeIndex < 0 ? -1 : Math.floor(activeIndex / columns);
  const headerHeight = grid ? 0 : rowHeight;
  const itemHeight = grid ? tileHeight : rowHeight;

  const virtualizer = useVirtualizer({
    count: Math.ceil(entries.length / columns),
    getScrollElement: () => scrollRef.current,
    estimateSize: () => itemHeight,
    overscan: 10,
    scrollMargin: headerHeight,
    scrollPaddingStart: headerHeight,
    observeElementRect: (instance, callback) =>
      observeElementRect(instance, (rect) =>
        callback(rect.width === 0 && rect.height === 0 ? fallbackRect : rect),
      ),
    // The active item stays rendered when scrolled away, so the tab stop never disappears.
    rangeExtractor: (range) => {
      const indexes = defaultRangeExtractor(range);
      if (activeRow >= 0 && !indexes.includes(activeRow)) {
        indexes.push(activeRow);
        indexes.sort((a, b) => a - b);
      }
      return indexes;
    },
  });

  useEffect(() => {
    const element = scrollRef.current;
    if (!grid || element === null || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    setWidth(element.clientWidth);
    return () => observer.disconnect();
  }, [grid]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new folder starts at its top
  useEffect(() => {
    if (activeRow > 0) virtualizer.scrollToIndex(activeRow);
    else scrollRef.current?.scrollTo?.({ top: 0 });
  }, [path, grid]);

  focusRef.current = () => {
    wantFocus.current = true;
    setFocusTick((tick) => tick + 1);
  };

  useEffect(() => {
    // The inline editor takes the focus itself.
    if (!wantFocus.current || activeIndex < 0 || renaming !== undefined) return;
    const element = scrollRef.current?.querySelector<HTMLElement>(`[data-index="${activeIndex}"]`);
    if (element == null) return;
    wantFocus.current = false;
    element.focus({ preventScroll: true });
  });

  const moveTo = (index: number, mode: "focus" | SelectMode) => {
    const target = Math.max(0, Math.min(entries.length - 1, index));
    store.focusIndex(target, mode);
    virtualizer.scrollToIndex(Math.floor(target / columns));
    wantFocus.current = true;
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    if (target.closest("[data-index]") === null && target !== event.currentTarget) return;
    const control = event.ctrlKey || event.metaKey;
    const key = event.key;
    const handled = () => event.preventDefault();
    if (key === "Backspace" || (key === "ArrowUp" && event.altKey)) {
      handled();
      wantFocus.current = true;
      store.goUp();
      return;
    }
    const active = entries[activeIndex];
    if (active === undefined) {
      if (control && key.toLowerCase() === "v") {
        handled();
        void store.paste();
      }
      return;
    }
    const mode: "focus" | SelectMode = event.shiftKey ? "range" : control ? "focus" : "replace";
    const page =
      Math.max(1, Math.floor((scrollRef.current?.clientHeight || 320) / itemHeight) - 1) * columns;
    const chosen = selection.size > 0 ? [...selection] : [active.path];
    const step: Record<string, number> = {
      ArrowDown: activeIndex + columns,
      ArrowUp: activeIndex - columns,
      Home: 0,
      End: entries.length - 1,
      PageDown: activeIndex + page,
      PageUp: activeIndex - page,
    };
    if (grid) {
      step.ArrowRight = activeIndex + 1;
      step.ArrowLeft = activeIndex - 1;
    }
    const next = step[key];
    if (next !== undefined) {
      handled();
      moveTo(next, mode);
    } else if (key === " ") {
      handled();
      store.select(active.path, event.shiftKey ? "range" : "toggle");
    } else if (key === "Enter") {
      handled();
      wantFocus.current = true;
      actions.open(active);
    } else if (key === "Delete") {
      handled();
      actions.askDelete(chosen);
    } else if (key === "F2") {
      handled();
      store.startRename(active.path);
    } else if (key === "Escape") {
      store.clearSelection();
      store.cut([]);
    } else if (key === "ContextMenu" || (key === "F10" && event.shiftKey)) {
      handled();
      const box = target.getBoundingClientRect();
      if (!selection.has(active.path)) store.select(active.path);
      actions.openMenu({ x: box.left + 24, y: box.top + box.height / 2 }, active);
    } else if (control && key.toLowerCase() === "a") {
      handled();
      store.selectAll();
    } else if (control && key.toLowerCase() === "x") {
      handled();
      store.cut(chosen);
    } else if (control && key.toLowerCase() === "v") {
      handled();
      void store.paste();
    } else if (isTypeaheadKey(event)) {
      const index = typeaheadIndex(
        entries.map((entry) => entry.name),
        activeIndex,
        typeahead.push(key),
      );
      if (index >= 0) {
        handled();
        moveTo(index, "replace");
      }
    }
  };

  const onItemClick = (event: MouseEvent, entry: FileEntry) => {
    const mode = event.shiftKey ? "range" : event.ctrlKey || event.metaKey ? "toggle" : "replace";
    store.select(entry.path, mode);
  };

  const onItemContextMenu = (event: MouseEvent, entry: FileEntry) => {
    event.preventDefault();
    event.stopPropagation();
    if (!selection.has(entry.path)) store.select(entry.path);
    actions.openMenu({ x: event.clientX, y: event.clientY }, entry);
  };

  const dragProps = (entry: FileEntry) => ({
    draggable: renaming !== entry.path,
    onDragStart: (event: DragEvent) => {
      const paths = selection.has(entry.path) ? [...selection] : [entry.path];
      actions.startDrag(paths, event.dataTransfer);
    },
    onDragEnd: () => actions.endDrag(),
    ...(entry.type === "directory"
      ? {
          onDragOver: (event: DragEvent) => {
            if (!actions.canDrop(entry.path, event.dataTransfer)) return;
            event.preventDefault();
            event.stopPropagation();
            setDropTarget(entry.path);
          },
          onDragLeave: () => setDropTarget(undefined),
          onDrop: (event: DragEvent) => {
            event.preventDefault();
            event.stopPropagation();
            setDropTarget(undefined);
            actions.drop(entry.path, event.dataTransfer);
          },
        }
      : {}),
  });

  const itemState = (entry: FileEntry, index: number) => ({
    "data-index": index,
    "aria-selected": selection.has(entry.path),
    tabIndex: index === activeIndex ? 0 : -1,
    "data-cut": clipboard?.paths.includes(entry.path) || undefined,
    "data-drop-target": dropTarget === entry.path || undefined,
    onClick: (event: MouseEvent) => onItemClick(event, entry),
    onDoubleClick: () => actions.open(entry),
    onContextMenu: (event: MouseEvent) => onItemContextMenu(event, entry),
    ...dragProps(entry),
  });

  const nameOf = (entry: FileEntry) =>
    renaming === entry.path ? (
      <RenameInput store={store} entry={entry} onDone={() => focusRef.current?.()} />
    ) : (
      <span className="cairn-fm-name" title={visibleName(entry.name)}>
        {visibleName(entry.name)}
      </span>
    );

  const icon = (entry: FileEntry) => (entry.type === "directory" ? <FolderIcon /> : <FileIcon />);

  const ariaSort = (key: typeof sort.key) =>
    sort.key === key ? (sort.direction === "asc" ? "ascending" : "descending") : undefined;
  const header = (key: typeof sort.key, label: string) => (
    <div role="columnheader" aria-sort={ariaSort(key)} className={`cairn-fm-col-${key}`}>
      <button type="button" className="cairn-fm-sort" onClick={() => store.toggleSort(key)}>
        {label}
        <span aria-hidden="true">
          {sort.key === key ? (sort.direction === "asc" ? " ▲" : " ▼") : ""}
        </span>
      </button>
    </div>
  );

  const items = virtualizer.getVirtualItems();
  const shift = (start: number) => ({ transform: `translateY(${start - headerHeight}px)` });
  const folderName = visibleName(baseName(path));

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the drop target of uploads around the grid
    <div
      className="cairn-fm-content"
      data-drop-target={dropTarget === path || undefined}
      onDragOver={(event) => {
        if (!actions.canDrop(path, event.dataTransfer)) return;
        event.preventDefault();
        setDropTarget(path);
      }}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) {
          setDropTarget(undefined);
        }
      }}
      onDrop={(event) => {
        event.preventDefault();
        setDropTarget(undefined);
        actions.drop(path, event.dataTransfer);
      }}
      onContextMenu={(event) => {
        if (event.defaultPrevented) return;
        event.preventDefault();
        actions.openMenu({ x: event.clientX, y: event.clientY });
      }}
    >
      <div
        ref={scrollRef}
        role="grid"
        aria-label={`Files in ${folderName}`}
        aria-rowcount={grid ? Math.ceil(entries.length / columns) : entries.length + 1}
        aria-colcount={grid ? columns : 3}
        aria-multiselectable="true"
        aria-busy={listing.status === "loading" || listing.refreshing}
        className={`cairn-fm-grid cairn-fm-${view}`}
        onKeyDown={onKeyDown}
        onClick={(event) => {
          // A click beside the entries clears the selection, as on a desktop.
          if ((event.target as HTMLElement).closest("[data-index], [role=columnheader]") === null) {
            store.clearSelection();
          }
        }}
        tabIndex={entries.length === 0 ? 0 : undefined}
      >
        {!grid && (
          <div role="rowgroup" className="cairn-fm-head">
            <div role="row" aria-rowindex={1} className="cairn-fm-row">
              {header("name", "Name")}
              {header("size", "Size")}
              {header("modified", "Modified")}
            </div>
          </div>
        )}
        <div
          role="rowgroup"
          className="cairn-fm-rows"
          style={{ height: virtualizer.getTotalSize() - headerHeight }}
        >
          {grid
            ? items.map((row) => (
                <div
                  key={row.key}
                  role="row"
                  aria-rowindex={row.index + 1}
                  className="cairn-fm-tile-row"
                  style={shift(row.start)}
                >
                  {entries
                    .slice(row.index * columns, row.index * columns + columns)
                    .map((entry, column) => (
                      <div
                        key={entry.path}
                        role="gridcell"
                        aria-colindex={column + 1}
                        className="cairn-fm-tile"
                        {...itemState(entry, row.index * columns + column)}
                      >
                        <span className="cairn-fm-tile-icon">{icon(entry)}</span>
                        {nameOf(entry)}
                      </div>
                    ))}
                </div>
              ))
            : items.map((row) => {
                const entry = entries[row.index] as FileEntry;
                return (
                  <div
                    key={entry.path}
                    role="row"
                    aria-rowindex={row.index + 2}
                    className="cairn-fm-row"
                    style={shift(row.start)}
                    {...itemState(entry, row.index)}
                  >
                    <div role="gridcell" className="cairn-fm-col-name">
                      {icon(entry)}
                      {nameOf(entry)}
                    </div>
                    <div role="gridcell" className="cairn-fm-col-size">
                      {entry.type === "directory" ? "Folder" : formatSize(entry.size)}
                    </div>
                    <div role="gridcell" className="cairn-fm-col-modified">
                      {formatDate(entry.mtime)}
                    </div>
                  </div>
                );
              })}
        </div>
      </div>
      {listing.status === "loading" && entries.length === 0 && (
        <p role="status" className="cairn-fm-note">
          Loading {folderName}…
        </p>
      )}
      {listing.status === "loaded" && entries.length === 0 && (
        <p className="cairn-fm-note">This folder is empty. Drop files here to upload them.</p>
      )}
      {listing.status === "error" && (
        <p className="cairn-fm-note">
          This folder could not be read.{" "}
          <button type="button" className="cairn-button" onClick={() => void store.refresh()}>
            Try again
          </button>
        </p>
      )}
    </div>
  );
}
