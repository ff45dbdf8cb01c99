// Usage by tag over the last 30 days (GET /api/usage, grouped by one tag key): CPU, memory,
// wall time, egress and cost per value of the tag, and the totals.

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { formatCost, formatCount, formatDuration } from "../../format.js";
import { EmptyState, ErrorNotice, Loading } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { getUsage, type UsageReport, usageKey } from "./sandbox-api.js";

type UsageTotals = UsageReport["totals"];

function formatSeconds(seconds: number): string {
  return seconds === 0 ? "0 s" : formatDuration(seconds * 1000);
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const usageColumns = ["Sandboxes", "CPU time", "Memory GB·h", "Wall time", "Egress", "Cost"];

/** A group's figures, in the order of {@link usageColumns}. */
function UsageCells(props: { usage: UsageTotals }) {
  const { usage } = props;
  return (
    <>
      <td className="dash-num">{formatCount(usage.sandboxes)}</td>
      <td className="dash-num">{formatSeconds(usage.cpuSeconds)}</td>
      <td className="dash-num">{usage.memoryGBHours.toFixed(3)}</td>
      <td className="dash-num">{formatSeconds(usage.wallSeconds)}</td>
      <td className="dash-num">{formatBytes(usage.egressBytes)}</td>
      <td className="dash-num">{formatCost(usage.costUsd)}</td>
    </>
  );
}

export function UsageByTag(props: {
  /** The tag key the usage is grouped by. */
  tagKey: string;
  onTagKeyChange: (key: string) => void;
  /** Keys the sandboxes listed have, offered first. */
  knownKeys: readonly string[];
}) {
  const ids = { key: useId(), keys: useId() };
  const key = props.tagKey.trim();
  const usage = useQuery({
    queryKey: [...usageKey, key],
    queryFn: ({ signal }) => getUsage(`tag:${key}`, signal),
    enabled: key !== "",
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <div className="sbx-field sbx-inline-field">
        <label htmlFor={ids.key}>Tag key</label>
        <input
          id={ids.key}
          list={ids.keys}
          value={props.tagKey}
          onChange={(event) => props.onTagKeyChange(event.currentTarget.value)}
          autoComplete="off"
          spellCheck={false}
          placeholder="team"
        />
        <datalist id={ids.keys}>
          {props.knownKeys.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      </div>
      {key === "" ? (
        <EmptyState title="No tag key chosen">
          Tag sandboxes (team=search) and choose the key to see what each value used.
        </EmptyState>
      ) : usage.isPending ? (
        <Loading label="Loading usage…" />
      ) : usage.isError ? (
        <ErrorNotice error={usage.error} retry={() => void usage.refetch()} />
      ) : usage.data.groups.length === 0 ? (
        <EmptyState title="No usage in this period">
          No sandbox ran between {usage.data.period_start} and {usage.data.period_end}.
        </EmptyState>
      ) : (
        <table className="dash-table sbx-usage">
          <caption className="sbx-caption">
            By “{key}”, {usage.data.period_start} to {usage.data.period_end} (UTC)
          </caption>
          <TableHead columns={[key, ...usageColumns.map((label) => ({ label, numeric: true }))]} />
          <tbody>
            {usage.data.groups.map((group) => (
              <tr key={group.key}>
                <th scope="row" className="dash-mono">
                  {group.key}
                </th>
                <UsageCells usage={group} />
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <UsageCells usage={usage.data.totals} />
            </tr>
          </tfoot>
        </table>
      )}
    </>
  );
}
