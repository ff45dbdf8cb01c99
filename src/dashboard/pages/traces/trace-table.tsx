// The list of traces as a table: each row's name is a link to the trace (Enter opens it; a click
// anywhere on the row does too), and the time, latency and cost headers sort the list.

import type { MouseEvent, ReactNode } from "react";
import { Link, useLocation } from "wouter";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import type { Sort, TraceRow, TraceView } from "./trace-view.js";

export function TraceTable(props: {
  rows: readonly TraceRow[];
  view: TraceView;
  /** Rows that came live, marked for a moment. */
  fresh: ReadonlySet<string>;
  onSort: (sort: Sort) => void;
}) {
  const { rows, view, onSort } = props;
  const [, navigate] = useLocation();
  const sortable = (sort: Sort, label: string, numeric = false) => {
    const active = view.sort === sort;
    const next = active && view.order === "desc" ? "ascending" : "descending";
    return (
      <th
        scope="col"
        className={numeric ? "dash-num" : undefined}
        aria-sort={active ? (view.order === "asc" ? "ascending" : "descending") : undefined}
      >
        <button
          type="button"
          className="traces-sort"
          onClick={() => onSort(sort)}
          aria-label={`${label}: sort ${next}`}
        >
          {label}
          <span aria-hidden="true" className="traces-sort-arrow">
            {active ? (view.order === "asc" ? "▲" : "▼") : "↕"}
          </span>
        </button>
      </th>
    );
  };
  const openRow = (event: MouseEvent<HTMLTableRowElement>, traceId: string) => {
    // Links and buttons in the row do their own thing; so does selecting text.
    if ((event.target as Element).closest("a, button")) return;
    if (window.getSelection()?.toString()) return;
    navigate(`/traces/${traceId}`);
  };
  return (
    <div className="traces-table-wrap">
      <table className="dash-table traces-table">
        <caption className="cairn-visually-hidden">
          Traces, sorted by {view.sort}, {view.order === "asc" ? "ascending" : "descending"}
        </caption>
        <thead>
          <tr>
            {sortable("time", "Time")}
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            {sortable("latency", "Latency", true)}
            <th scope="col" className="dash-num">
              Tokens
            </th>
            {sortable("cost", "Cost", true)}
            <th scope="col">Model</th>
            <th scope="col">Session</th>
            <th scope="col">Tags</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr
              key={row.trace_id}
              data-fresh={props.fresh.has(row.trace_id) ? "" : undefined}
              onClick={(event) => openRow(event, row.trace_id)}
            >
              <td>
                <time dateTime={row.start_time}>{formatTime(row.start_time)}</time>
              </td>
              <th scope="row" className="traces-name">
                <Link href={`/traces/${row.trace_id}`}>
                  {row.name ?? <span className="dash-muted">(root span not in yet)</span>}
                </Link>
                {row.kind === null ? null : (
                  <span className="dash-badge traces-kind">{row.kind}</span>
                )}
              </th>
              <td>
                <StatusBadge row={row} />
              </td>
              <td className="dash-num">{formatDuration(row.duration_ms)}</td>
              <td className="dash-num">{formatCount(row.usage.total_tokens)}</td>
              <td className="dash-num">{formatCost(row.cost_usd)}</td>
              <td className="traces-clip">{joined(row.models)}</td>
              <td className="traces-clip">
                {row.session_id === null ? (
                  <span className="dash-muted">—</span>
                ) : (
                  <Link href={`/sessions/${encodeURIComponent(row.session_id)}`}>
                    {row.session_id}
                  </Link>
                )}
              </td>
              <td className="traces-tags">
                {row.tags === undefined || row.tags.length === 0 ? (
                  <span className="dash-muted">—</span>
                ) : (
                  <span className="traces-tag-list">
                    {row.tags.map((tag) => (
                      <span key={tag} className="dash-badge">
                        {tag}
                      </span>
                    ))}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function StatusBadge(props: { row: TraceRow }) {
  const { row } = props;
  if (row.status === "ok") {
    return (
      <span className="dash-badge" data-status="ok">
        OK
      </span>
    );
  }
  return (
    <span className="dash-badge" data-status="error">
      Error{row.error_count > 1 ? ` (${formatCount(row.error_count)} spans)` : ""}
    </span>
  );
}

function joined(values: readonly string[] | undefined): ReactNode {
  return values === undefined || values.length === 0 ? (
    <span className="dash-muted">—</span>
  ) : (
    values.join(", ")
  );
}
