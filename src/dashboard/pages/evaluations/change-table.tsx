// The cases that regressed (or improved) from the base run to the other: each named so in words
// and marked with an arrow and colour, with its result and scores before and after, and both
// of its traces.

import { Link } from "wouter";
import type { CaseChange } from "../../../core/wire/evals.js";
import { TableHead } from "../../ui/table-head.js";
import { CaseText } from "./case-text.js";
import { Delta } from "./delta.js";
import { formatScore } from "./eval-api.js";
import { tracePath } from "./eval-nav.js";

const words = {
  regression: {
    title: "Regressions",
    one: "Regression",
    mark: "▼",
    tone: "bad",
    none: "No case regressed.",
  },
  improvement: {
    title: "Improvements",
    one: "Improvement",
    mark: "▲",
    tone: "good",
    none: "No case improved.",
  },
} as const;

export function ChangeTable(props: {
  kind: "regression" | "improvement";
  changes: readonly CaseChange[];
}) {
  const said = words[props.kind];
  const titleId = `compare-${props.kind}`;
  return (
    <section aria-labelledby={titleId} className="compare-changes" data-kind={props.kind}>
      <h2 id={titleId}>
        {said.title} ({props.changes.length})
      </h2>
      {props.changes.length === 0 ? (
        <p className="dash-muted">{said.none}</p>
      ) : (
        <div className="eval-table-wrap">
          <table className="dash-table">
            <caption className="cairn-visually-hidden">
              {said.title}: cases, their result and scores in the base and the run, and their traces
            </caption>
            <TableHead columns={["Change", "Case", "Result", "Scores", "Traces"]} />
            <tbody>
              {props.changes.map((change, index) => (
                <tr key={change.case_id ?? `${index}:${change.query}`} data-tone={said.tone}>
                  <td>
                    <span className="dash-badge" data-tone={said.tone}>
                      <span aria-hidden="true">{said.mark} </span>
                      {said.one}
                    </span>
                  </td>
                  <th scope="row" className="eval-text-cell">
                    <CaseText text={change.query} />
                  </th>
                  <td>
                    {change.base_passed ? "Passed" : "Failed"} →{" "}
                    {change.run_passed ? "Passed" : "Failed"}
                  </td>
                  <td>
                    <ul className="compare-scores">
                      {Object.entries(change.scores).map(([slug, score]) => (
                        <li key={slug}>
                          {slug}: {formatScore(score.base)} → {formatScore(score.run)}{" "}
                          <Delta value={score.delta} />
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <TraceLinks change={change} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function TraceLinks(props: { change: CaseChange }) {
  const { base_trace_id: before, run_trace_id: after, query } = props.change;
  const name = query.length > 60 ? `${query.slice(0, 60)}…` : query;
  if (before == null && after == null) return <span className="dash-muted">none</span>;
  return (
    <span className="compare-traces">
      {before == null ? null : (
        <Link href={tracePath(before)} aria-label={`Base trace of “${name}”`}>
          Base trace
        </Link>
      )}
      {after == null ? null : (
        <Link href={tracePath(after)} aria-label={`Run trace of “${name}”`}>
          Run trace
        </Link>
      )}
    </span>
  );
}
