// The project's sessions, the last active first: when each was active, its turns, tokens, cost,
// latency and errors. The period, the tag and the page are in the URL.

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { FormEvent } from "react";
import { Link } from "wouter";
import type { SessionList } from "../../../core/wire/sessions.js";
import { api, queryString } from "../../api/client.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import { CursorPager } from "../../ui/cursor-pager.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { PeriodFields } from "../../ui/period-fields.js";
import { TableHead } from "../../ui/table-head.js";
import { useUrlParams } from "../../url-state.js";
import "./sessions.css";

const filterNames = ["period_start", "period_end", "tag"] as const;

export default function SessionsPage() {
  const [params, change] = useUrlParams();
  const filters = Object.fromEntries(
    filterNames.map((name) => [name, params.get(name) ?? undefined]),
  ) as Record<(typeof filterNames)[number], string | undefined>;
  const cursor = params.get("cursor") ?? undefined;
  const sessions = useQuery({
    queryKey: ["sessions", filters, cursor],
    queryFn: ({ signal }) =>
      api<SessionList>(`/sessions${queryString({ ...filters, cursor, limit: 50 })}`, { signal }),
    placeholderData: keepPreviousData,
  });

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const changes: Record<string, string | undefined> = { cursor: undefined };
    for (const name of filterNames) changes[name] = String(form.get(name) ?? "").trim();
    change(changes);
  };

  const data = sessions.data;
  return (
    <>
      <PageHeader
        title="Sessions"
        description={
          data === undefined
            ? "Conversations and runs of related traces, the last active first."
            : `Sessions active from ${data.period_start} to ${data.period_end} (UTC), the last active first.`
        }
      />
      <form
        // Reset to the URL's values when it changes (Back, a shared link).
        key={params.toString()}
        className="sessions-filters"
        aria-label="Filter sessions"
        onSubmit={onFilter}
      >
        <PeriodFields start={filters.period_start} end={filters.period_end} />
        <label className="dash-field">
          <span>Tag</span>
          <input name="tag" defaultValue={filters.tag ?? ""} placeholder="any tag" />
        </label>
        <button type="submit" className="dash-button dash-primary">
          Apply
        </button>
        {filterNames.some((name) => filters[name] !== undefined) ? (
          <button
            type="button"
            className="dash-button"
            onClick={() =>
              change({ period_start: null, period_end: null, tag: null, cursor: null })
            }
          >
            Clear filters
          </button>
        ) : null}
      </form>
      {sessions.isPending ? (
        <Loading label="Loading sessions…" />
      ) : sessions.isError ? (
        <ErrorNotice error={sessions.error} retry={() => void sessions.refetch()} />
      ) : data === undefined || data.sessions.length === 0 ? (
        <EmptyState title="No sessions in this period">
          A session is the traces recorded inside <code>agentSession().run()</code> (or with a
          session id); widen the period or clear the tag.
        </EmptyState>
      ) : (
        <>
          <SessionTable list={data} />
          <CursorPager
            cursor={cursor}
            next={data.next_cursor}
            label="Pages of sessions"
            onPage={(next) => change({ cursor: next })}
          />
        </>
      )}
    </>
  );
}

function SessionTable(props: { list: SessionList }) {
  return (
    <div className="sessions-table-wrap">
      <table className="dash-table">
        <caption className="cairn-visually-hidden">Sessions, the last active first</caption>
        <TableHead
          columns={[
            "Session",
            "First activity",
            "Last activity",
            { label: "Turns", numeric: true },
            { label: "Tokens", numeric: true },
            { label: "Cost", numeric: true },
            { label: "Mean latency", numeric: true },
            { label: "Errors", numeric: true },
            "Tags",
          ]}
        />
        <tbody>
          {props.list.sessions.map((session) => (
            <tr key={session.session_id}>
              <th scope="row" className="sessions-id">
                <Link href={`/sessions/${encodeURIComponent(session.session_id)}`}>
                  {session.session_id}
                </Link>
              </th>
              <td>{formatTime(session.start_time)}</td>
              <td>{formatTime(session.end_time)}</td>
              <td className="dash-num">{formatCount(session.turn_count ?? session.trace_count)}</td>
              <td className="dash-num">{formatCount(session.usage.total_tokens)}</td>
              <td className="dash-num">{formatCost(session.cost_usd)}</td>
              <td className="dash-num">{formatDuration(session.latency_ms?.mean)}</td>
              <td className="dash-num">
                {session.error_count === 0 ? (
                  "0"
                ) : (
                  <span className="dash-badge" data-status="error">
                    {formatCount(session.error_count)} failed
                  </span>
                )}
              </td>
              <td className="sessions-tags">{session.tags.join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
