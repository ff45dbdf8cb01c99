// Every group of the period in one table (the charts draw the first few): traces, spans, errors,
// tokens, cost and latency percentiles.

import { formatCost, formatCount, formatDuration, formatPercent } from "../../format.js";
import type { GroupRow } from "./chart-data.js";
import { ScrollingTable } from "./scrolling-table.js";

const columns: ReadonlyArray<{ name: string; value: (row: GroupRow) => string }> = [
  { name: "Traces", value: (row) => formatCount(row.traces) },
  { name: "Spans", value: (row) => formatCount(row.spans) },
  { name: "Errors", value: (row) => formatCount(row.errors) },
  { name: "Error rate", value: (row) => formatPercent(row.errorRate) },
  { name: "Tokens", value: (row) => formatCount(row.tokens) },
  { name: "Cost", value: (row) => formatCost(row.cost) },
  { name: "p50", value: (row) => formatDuration(row.latency?.p50_ms) },
  { name: "p95", value: (row) => formatDuration(row.latency?.p95_ms) },
  { name: "p99", value: (row) => formatDuration(row.latency?.p99_ms) },
];

export function BreakdownTable(props: { rows: readonly GroupRow[]; noun: string }) {
  const { rows, noun } = props;
  return (
    <section className="analytics-breakdown" aria-labelledby="analytics-breakdown-title">
      <h2 id="analytics-breakdown-title">By {noun}</h2>
      <ScrollingTable label={`By ${noun}, table`}>
        <table className="dash-table">
          <caption className="cairn-visually-hidden">
            Every {noun} of the period, most spans first
          </caption>
          <thead>
            <tr>
              <th scope="col">{noun[0]?.toUpperCase() + noun.slice(1)}</th>
              {columns.map((column) => (
                <th scope="col" className="dash-num" key={column.name}>
                  {column.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={String(row.key)}>
                <th scope="row">{row.label}</th>
                {columns.map((column) => (
                  <td className="dash-num" key={column.name}>
                    {column.value(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollingTable>
    </section>
  );
}
