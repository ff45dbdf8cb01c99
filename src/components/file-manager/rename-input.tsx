import { useId, useRef, useState } from "react";
import type { FileEntry } from "../client/files.js";
import { visibleName } from "../client/names.js";
import type { FileManagerStore } from "./file-manager-store.js";

/** The inline editor of F2: Enter renames, Esc cancels, a refused name says why. */
export function RenameInput({
  store,
  entry,
  onDone,
}: {
  readonly store: FileManagerStore;
  readonly entry: FileEntry;
  readonly onDone: () => void;
}) {
  const [value, setValue] = useState(entry.name);
  const finished = useRef(false);
  const problemId = useId();
  const problem = store.renameProblem(entry.path, value);

  const finish = (commit: boolean) => {
    if (finished.current) return;
    if (commit && problem !== undefined) return;
    finished.current = true;
    if (commit) {
      // The active item is the renamed entry once the folder is read again.
      void store.rename(entry.path, value).then(onDone);
    } else {
      store.cancelRename();
      onDone();
    }
  };

  return (
    <span className="cairn-fm-rename">
      <input
        className="cairn-fm-rename-input"
        aria-label={`New name for ${visibleName(entry.name)}`}
        aria-invalid={problem !== undefined}
        aria-describedby={problem === undefined ? undefined : problemId}
        value={value}
        // biome-ignore lint/a11y/noAutofocus: the editor opens on F2 and takes the keys at once
        autoFocus
        onFocus={(event) => {
          // The name without its extension is selected, as desktop managers do.
          const dot = entry.type === "directory" ? -1 : entry.name.lastIndexOf(".");
          event.currentTarget.setSelectionRange(0, dot > 0 ? dot : entry.name.length);
        }}
        onChange={(event) => setValue(event.currentTarget.value)}
        onKeyDown={(event) => {
          event.stopPropagation();
          if (event.key === "Enter") {
            event.preventDefault();
            finish(true);
          } else if (event.key === "Escape") {
            event.preventDefault();
            finish(false);
          }
        }}
        onBlur={() => finish(problem === undefined)}
        onClick={(event) => event.stopPropagation()}
        onDoubleClick={(event) => event.stopPropagation()}
      />
      {problem !== undefined && (
        <span id={problemId} role="alert" className="cairn-fm-rename-problem">
          {problem}
        </span>
      )}
    </span>
  );
}
