// The project's traces: every filter of the API and a search of names, inputs and outputs, in
// the URL; sorted by time, latency or cost from the column headers; paged by cursor; and new
// traces coming in while the page is open.

import {
  keepPreviousData,
  usePrefetchQuery,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { useRef } from "react";
import type { TraceList } from "../../../core/wire/traces.js";
import { api, queryString } from "../../api/client.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { useUrlParams } from "../../url-state.js";
import { TraceFilters } from "./filters.js";
import { useLiveTraces } from "./live-traces.js";
import { TracePager } from "./trace-pager.js";
import { TraceTable } from "./trace-table.js";
import { isFiltered, listQuery, readView, type Sort, showsNewestFirst } from "./trace-view.js";
import "../../ui/field.css";
import "./traces.css";

export default function TracesPage() {
  const [params, change] = useUrlParams();
  const client = useQueryClient();
  const view = readView(params);
  const query = listQuery(view);
  const queryKey = ["traces", query];
  const queryFn = ({ signal }: { signal: AbortSignal }) =>
    api<TraceList>(`/analytics/traces${queryString(query)}`, { signal });
  // Asked for while rendering: React holds a lazily loaded page back up to 300 ms before
  // showing it, and the request need not wait for that.
  usePrefetchQuery({ queryKey, queryFn });
  const traces = useQuery({ queryKey, queryFn, placeholderData: keepPreviousData });
  const top = useRef<HTMLElement>(null);
  const live = useLiveTraces(view, queryKey, top);

  const onSort = (sort: Sort) => {
    const order = view.sort === sort && view.order === "desc" ? "asc" : "desc";
    change({
      sort: sort === "time" ? null : sort,
      order: order === "desc" ? null : order,
      cursor: null,
      back: null,
    });
  };
  const showWaiting = () => {
    live.clear();
    // Every list read so far is older than what waits; the one shown next is read again.
    void client.invalidateQueries({ queryKey: ["traces"] });
    if (!showsNewestFirst(view)) change({ sort: null, order: null, cursor: null, back: null });
    top.current?.focus();
  };

  const data = traces.data;
  const period = `${view.periodStart === view.periodEnd ? view.periodStart : `${view.periodStart} to ${view.periodEnd}`} (UTC)`;
  return (
    <>
      <PageHeader
        title="Traces"
        description={`Traces from ${period}; new ones appear while this page is open.`}
      />
      <TraceFilters view={view} change={change} />
      <section
        ref={top}
        className="traces-results"
        tabIndex={-1}
        aria-label="Trace list"
        aria-busy={traces.isFetching}
      >
        <div className="traces-live" role="status">
          {live.waiting > 0 || live.stale ? (
            <button type="button" className="dash-button dash-primary" onClick={showWaiting}>
              {live.waiting > 0
                ? `${live.waiting} new ${live.waiting === 1 ? "trace" : "traces"}${live.uncertain ? " (some may not match)" : ""} — show`
                : "The list may be out of date — refresh"}
            </button>
          ) : live.fresh.size > 0 ? (
            <span className="dash-muted">
              {live.fresh.size} new {live.fresh.size === 1 ? "trace" : "traces"} added at the top
            </span>
          ) : null}
        </div>
        {traces.isPending ? (
          <Loading label="Loading traces…" />
        ) : traces.isError ? (
          <ErrorNotice error={traces.error} retry={() => void traces.refetch()} />
        ) : data === undefined || data.traces.length === 0 ? (
          isFiltered(view) ? (
            <EmptyState title="No traces match">
              Nothing in this period matches the filters and search. Widen the period or clear the
              filters.
            </EmptyState>
          ) : (
            <EmptyState title="No traces in this period">
              Traces appear here as your app records them: wrap a call in <code>observe()</code>{" "}
              (cairn-ai) or send OpenTelemetry spans to <code>/v1/traces</code>.
            </EmptyState>
          )
        ) : (
          <>
            <TraceTable rows={data.traces} view={view} fresh={live.fresh} onSort={onSort} />
            <TracePager view={view} next={data.next_cursor} change={change} />
          </>
        )}
      </section>
    </>
  );
}
