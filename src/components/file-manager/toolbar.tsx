import { type KeyboardEvent, useId, useRef } from "react";
import type { FileEntry } from "../client/files.js";
import type { FileManagerActions } from "./actions.js";
import type { FileManagerStore } from "./file-manager-store.js";
import type { SortKey } from "./sort.js";
import { useStoreCell } from "./use-file-manager.js";

/** New folder, upload, rename, delete, download, sort and view; arrows move between controls. */
export function Toolbar({
  store,
  actions,
}: {
  readonly store: FileManagerStore;
  readonly actions: FileManagerActions;
}) {
  const selection = useStoreCell(store.selection);
  const entries = useStoreCell(store.entries);
  const view = useStoreCell(store.view);
  const sort = useStoreCell(store.sort);
  const picker = useRef<HTMLInputElement>(null);
  const sortId = useId();
  const selected = entries.filter((entry) => selection.has(entry.path));
  const single: FileEntry | undefined = selected.length === 1 ? selected[0] : undefined;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if ((event.target as HTMLElement).tagName === "SELECT") return;
    const controls = [
      ...event.currentTarget.querySelectorAll<HTMLElement>("button:not(:disabled), select"),
    ];
    const index = controls.indexOf(event.target as HTMLElement);
    const next =
      controls[(index + (event.key === "ArrowRight" ? 1 : -1) + controls.length) % controls.length];
    event.preventDefault();
    next?.focus();
  };

  return (
    <div
      role="toolbar"
      aria-label="File actions"
      className="cairn-fm-toolbar"
      onKeyDown={onKeyDown}
    >
      <button type="button" className="cairn-button" onClick={actions.newFolder}>
        New folder
      </button>
      <button type="button" className="cairn-button" onClick={() => picker.current?.click()}>
        Upload
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        tabIndex={-1}
        aria-hidden="true"
        onChange={(event) => {
          const files = event.currentTarget.files;
          if (files !== null && files.length > 0) void store.upload([...files]);
          event.currentTarget.value = "";
        }}
      />
      <button
        type="button"
        className="cairn-button"
        disabled={single === undefined}
        onClick={() => store.startRename(single?.path)}
      >
        Rename
      </button>
      <button
        type="button"
        className="cairn-button"
        disabled={selected.length === 0}
        onClick={() => actions.askDelete(selected.map((entry) => entry.path))}
      >
        Delete
      </button>
      <button
        type="button"
        className="cairn-button"
        disabled={single?.type !== "file"}
        onClick={() => single !== undefined && actions.download(single)}
      >
        Download
      </button>
      <span className="cairn-fm-spacer" />
      <label htmlFor={sortId} className="cairn-fm-label">
        Sort by
      </label>
      <select
        id={sortId}
        className="cairn-fm-select"
        value={sort.key}
        onChange={(event) => store.setSort({ ...sort, key: event.currentTarget.value as SortKey })}
      >
        <option value="name">Name</option>
        <option value="size">Size</option>
        <option value="modified">Modified</option>
      </select>
      <button
        type="button"
        className="cairn-button"
        aria-label={
          sort.direction === "asc" ? "Ascending, sort descending" : "Descending, sort ascending"
        }
        onClick={() => store.toggleSort(sort.key)}
      >
        <span aria-hidden="true">{sort.direction === "asc" ? "↑" : "↓"}</span>
      </button>
      <button
        type="button"
        className="cairn-button"
        aria-pressed={view === "list"}
        onClick={() => store.setView("list")}
      >
        List
      </button>
      <button
        type="button"
        className="cairn-button"
        aria-pressed={view === "grid"}
        onClick={() => store.setView("grid")}
      >
        Grid
      </button>
    </div>
  );
}
