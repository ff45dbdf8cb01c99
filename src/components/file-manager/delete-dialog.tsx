import { type KeyboardEvent, useEffect, useId, useRef } from "react";
import { visibleName } from "../client/names.js";
import { baseName } from "./paths.js";

const listed = 5;

/**
 * Asks before deleting, naming what goes (folders with what they hold). Modal: the focus stays
 * inside (Tab wraps), starts on Cancel, Esc cancels.
 */
export function DeleteDialog({
  paths,
  folders,
  onConfirm,
  onCancel,
}: {
  readonly paths: readonly string[];
  /** How many of the paths are folders. */
  readonly folders: number;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
}) {
  const dialog = useRef<HTMLDivElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();
  const only = paths.length === 1 ? visibleName(baseName(paths[0] as string)) : undefined;

  useEffect(() => {
    cancel.current?.focus();
  }, []);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    event.stopPropagation();
    if (event.key === "Escape") {
      event.preventDefault();
      onCancel();
      return;
    }
    if (event.key !== "Tab") return;
    const controls = [...(dialog.current?.querySelectorAll<HTMLElement>("button") ?? [])];
    const first = controls[0];
    const last = controls[controls.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first?.focus();
    }
  };

  return (
    <div className="cairn-fm-backdrop">
      <div
        ref={dialog}
        role="alertdialog"
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={bodyId}
        className="cairn-fm-dialog"
        onKeyDown={onKeyDown}
      >
        <h2 id={titleId} className="cairn-fm-dialog-title">
          {only === undefined ? `Delete ${paths.length} items?` : `Delete “${only}”?`}
        </h2>
        <div id={bodyId}>
          {only === undefined && (
            <ul className="cairn-fm-dialog-list">
              {paths.slice(0, listed).map((path) => (
                <li key={path}>{visibleName(baseName(path))}</li>
              ))}
              {paths.length > listed && <li>and {paths.length - listed} more</li>}
            </ul>
          )}
          <p>
            {folders > 0
              ? "Folders are deleted with everything in them. This cannot be undone."
              : "This cannot be undone."}
          </p>
        </div>
        <div className="cairn-fm-dialog-actions">
          <button ref={cancel} type="button" className="cairn-button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="cairn-button" data-variant="danger" onClick={onConfirm}>
            Delete
          </button>
        </div>
      </div>
    </div>
  );
}
