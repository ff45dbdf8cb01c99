// The parts every page is made of: its header, and what it shows while loading, when empty and
// when a request failed.

import type { ReactNode } from "react";
import { CairnRequestError } from "../api/client.js";

export function PageHeader(props: {
  title: string;
  /** A line under the title. */
  description?: ReactNode;
  /** Controls on the right: buttons, a live indicator. */
  actions?: ReactNode;
}) {
  return (
    <header className="dash-page-header">
      <div>
        <h1>{props.title}</h1>
        {props.description === undefined ? null : <p className="dash-muted">{props.description}</p>}
      </div>
      {props.actions === undefined ? null : <div className="dash-actions">{props.actions}</div>}
    </header>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p className="dash-muted" role="status">
      {props.label ?? "Loading…"}
    </p>
  );
}

export function EmptyState(props: { title: string; children?: ReactNode }) {
  return (
    <div className="dash-empty">
      <p className="dash-empty-title">{props.title}</p>
      {props.children === undefined ? null : <div className="dash-muted">{props.children}</div>}
    </div>
  );
}

/** A failed request, in words: the service's own message, and what to do when there is one. */
export function ErrorNotice(props: {
  error: unknown;
  retry?: () => void;
  /** What failed, after "Could not": default "load this". */
  doing?: string;
}) {
  const { error } = props;
  const message =
    error instanceof CairnRequestError
      ? error.message
      : error instanceof Error
        ? error.message
        : "something went wrong";
  const status = error instanceof CairnRequestError ? ` (${error.status})` : "";
  return (
    <div className="dash-error" role="alert">
      <p>
        Could not {props.doing ?? "load this"}
        {status}: {message}
      </p>
      {props.retry === undefined ? null : (
        <button type="button" className="dash-button" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}
