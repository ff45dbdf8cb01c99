// A question before something that cannot be undone (kill a sandbox, roll back a version): the
// browser's modal <dialog>, so the rest of the page is inert while it is open (Tab wraps inside
// it) and Escape cancels; the focus starts on Cancel and goes back where it was on close.

import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef } from "react";
import { ErrorNotice } from "./page.js";
import "./confirm-dialog.css";

export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  /** What happens, in a sentence or two. */
  children?: ReactNode;
  /** The button that does it: "Kill sandbox", "Roll back". */
  confirmLabel: string;
  /** While the request is under way: the buttons wait. */
  busy?: boolean;
  /** The request failed: said in the dialog, which stays open. */
  error?: unknown;
  /** What failed, for the error: "kill the sandbox". */
  doing?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { open, onCancel } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (element === null || !open) return undefined;
    const returnTo = document.activeElement;
    element.showModal();
    cancel.current?.focus();
    return () => {
      element.close();
      // Back where it was; to the page's start when that control went (the row it killed).
      const back =
        returnTo instanceof HTMLElement && returnTo.isConnected && !returnTo.matches(":disabled")
          ? returnTo
          : document.getElementById("main");
      back?.focus();
    };
  }, [open]);

  useEffect(() => {
    const element = dialog.current;
    if (element === null) return undefined;
    // Escape: the page decides (its state closes the dialog), not the browser on its own.
    const onCancelEvent = (event: Event) => {
      event.preventDefault();
      onCancel();
    };
    element.addEventListener("cancel", onCancelEvent);
    return () => element.removeEventListener("cancel", onCancelEvent);
  }, [onCancel]);

  // Tab wraps from the last button to the first (and Shift+Tab back): the browser's modal keeps
  // the page inert, but would let the focus out of the dialog into its own toolbar.
  const wrapTab = (event: KeyboardEvent<HTMLDialogElement>) => {
    if (event.key !== "Tab") return;
    const controls = [
      ...event.currentTarget.querySelectorAll<HTMLElement>("button:not(:disabled), a[href]"),
    ];
    const edge = event.shiftKey ? controls[0] : controls[controls.length - 1];
    if (edge === undefined || document.activeElement !== edge) return;
    event.preventDefault();
    (event.shiftKey ? controls[controls.length - 1] : controls[0])?.focus();
  };

  return (
    <dialog
      ref={dialog}
      className="dash-dialog"
      onKeyDown={wrapTab}
      role="alertdialog"
      aria-labelledby={titleId}
      aria-describedby={props.children === undefined ? undefined : bodyId}
    >
      {open ? (
        <>
          <h2 id={titleId}>{props.title}</h2>
          {props.children === undefined ? null : (
            <div id={bodyId} className="dash-dialog-body">
              {props.children}
            </div>
          )}
          {props.error === undefined || props.error === null ? null : (
            <ErrorNotice error={props.error} doing={props.doing ?? "do this"} />
          )}
          <div className="dash-dialog-actions">
            <button
              ref={cancel}
              type="button"
              className="dash-button"
              onClick={onCancel}
              disabled={props.busy === true}
            >
              Cancel
            </button>
            <button
              type="button"
              className="dash-button dash-danger"
              onClick={props.onConfirm}
              disabled={props.busy === true}
            >
              {props.busy === true ? "Working…" : props.confirmLabel}
            </button>
          </div>
        </>
      ) : null}
    </dialog>
  );
}
