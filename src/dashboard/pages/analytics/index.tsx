// The analytics page: the period's totals, then traces, errors, tokens, cost and latency over
// time, by group when one is chosen, and every group in a table. Its choices live in the URL.
// uPlot is imported here only, so it loads with this page.

import { useMemo, useRef } from "react";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { useUrlParams } from "../../url-state.js";
import { BreakdownTable } from "./breakdown-table.js";
import {
  buildAnalytics,
  type ChartId,
  maxLines,
  type Percentile,
  percentiles,
} from "./chart-data.js";
import { AnalyticsControls, groupings, parseGrouping, parseKind } from "./controls.js";
import { EmptyProject } from "./empty-project.js";
import { dayOf, periodChoices, periodFromParams } from "./period.js";
import { useProjectHasSpans, useReports } from "./reports.js";
import { useChartColors } from "./theme-colors.js";
import { TimeChart } from "./time-chart.js";
import { TotalsFigures } from "./totals.js";
import "./analytics.css";

export default function AnalyticsPage() {
  const [params, change] = useUrlParams();
  const page = useRef<HTMLDivElement>(null);
  const colors = useChartColors(page);
  const now = Date.now();
  const period = periodFromParams(params, now);
  const grouping = parseGrouping(params.get("group"));
  const kind = parseKind(params.get("kind"));
  const percentile: Percentile =
    percentiles.find((name) => name === params.get("percentile")) ?? "p95";
  const tables = new Set((params.get("tables") ?? "").split(",").filter(Boolean));
  const reports = useReports(period.ok ? period.period : undefined, grouping, kind);
  const data = reports.data;
  const periodEmpty = data !== undefined && data.metrics.totals.span_count === 0;
  const hasSpans = useProjectHasSpans(periodEmpty && kind === null);
  const analytics = useMemo(
    () => (data === undefined ? undefined : buildAnalytics(data, data.grouping, percentile)),
    [data, percentile],
  );

  const toggleTable = (id: ChartId, show: boolean) => {
    const next = new Set(tables);
    if (show) next.add(id);
    else next.delete(id);
    change({ tables: [...next].sort().join(",") }, { replace: true });
  };
  const periodLabel =
    periodChoices.find((choice) => period.ok && choice.value === period.period.choice)?.label ??
    "the period";
  const groupNoun = groupings.find((option) => option.value === data?.grouping)?.label ?? "";

  let body: React.ReactNode;
  if (!period.ok) body = null;
  else if (reports.isError && data === undefined) {
    body = (
      <ErrorNotice
        error={reports.error}
        doing="load analytics"
        retry={() => void reports.refetch()}
      />
    );
  } else if (data === undefined || analytics === undefined) {
    body = <Loading label="Loading analytics…" />;
  } else if (periodEmpty && kind === null && hasSpans.data === false) {
    body = <EmptyProject />;
  } else if (periodEmpty && kind === null && hasSpans.isPending) {
    body = <Loading label="Loading analytics…" />;
  } else if (periodEmpty) {
    body = (
      <EmptyState title="No spans in this period">
        <p>
          Nothing was recorded {kind === null ? "" : `of kind ${kind} `}between{" "}
          {period.period.firstDay} and {period.period.lastDay} (UTC).
        </p>
        {period.period.choice === "30d" ? null : (
          <button
            type="button"
            className="dash-button"
            onClick={() => change({ period: "30d", from: null, to: null })}
          >
            Show the last 30 days
          </button>
        )}
      </EmptyState>
    );
  } else {
    const moreGroups = analytics.groups.length - maxLines;
    body = (
      <div aria-busy={reports.isPlaceholderData}>
        <TotalsFigures totals={analytics.totals} label={`Totals, ${periodLabel.toLowerCase()}`} />
        {moreGroups > 0 ? (
          <p className="dash-muted">
            The charts draw the {maxLines} groups with the most spans; {moreGroups} more are in the
            table below.
          </p>
        ) : null}
        <div className="analytics-charts">
          {analytics.charts.map((model) => (
            <TimeChart
              key={model.id}
              model={model}
              colors={colors}
              interval={data.interval}
              showTable={tables.has(model.id)}
              onShowTable={(show) => toggleTable(model.id, show)}
              controls={
                model.id === "latency" && data.grouping !== "none" ? (
                  <label className="analytics-inline-field">
                    <span>Percentile</span>
                    <select
                      value={percentile}
                      onChange={(event) =>
                        change({
                          percentile:
                            event.currentTarget.value === "p95" ? null : event.currentTarget.value,
                        })
                      }
                    >
                      {percentiles.map((name) => (
                        <option key={name} value={name}>
                          {name}
                        </option>
                      ))}
                    </select>
                  </label>
                ) : undefined
              }
            />
          ))}
        </div>
        {analytics.groups.length === 0 ? null : (
          <BreakdownTable rows={analytics.groups} noun={groupNoun.toLowerCase()} />
        )}
      </div>
    );
  }

  return (
    <div ref={page} className="analytics-page">
      <PageHeader
        title="Analytics"
        description="Spans by the time they started, in UTC days and hours; a trace counts when its root span starts."
      />
      <AnalyticsControls params={params} change={change} period={period} today={dayOf(now)} />
      {body}
    </div>
  );
}
