// The period in figures, above the charts: traces, the share of spans that failed, tokens, cost
// and the median and 95th percentile of span durations.

import { formatCost, formatCount, formatDuration, formatPercent } from "../../format.js";
import type { Totals } from "./chart-data.js";

export function TotalsFigures(props: { totals: Totals; label: string }) {
  const { totals } = props;
  const figures = [
    { name: "Traces", value: formatCount(totals.traces) },
    {
      name: "Error rate",
      value: formatPercent(totals.errorRate),
      detail: `${formatCount(totals.errors)} of ${formatCount(totals.spans)} spans`,
    },
    { name: "Tokens", value: formatCount(totals.tokens) },
    { name: "Cost", value: formatCost(totals.cost) },
    { name: "Latency p50", value: formatDuration(totals.p50) },
    { name: "Latency p95", value: formatDuration(totals.p95) },
  ];
  return (
    <dl className="analytics-totals" aria-label={props.label}>
      {figures.map((figure) => (
        <div key={figure.name} className="analytics-figure">
          <dt>{figure.name}</dt>
          <dd>
            <span className="analytics-figure-value">{figure.value}</span>
            {figure.detail === undefined ? null : (
              <span className="dash-muted analytics-figure-detail">{figure.detail}</span>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
