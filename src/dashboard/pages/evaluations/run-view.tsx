// One test run: its summary (pass rate, each scorer's mean, latency, cost) and its cases, each
// with its scores, whether it passed, and a link to its trace. Failed cases alone on request.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "wouter";
import type { TestRunDetail } from "../../../core/wire/evals.js";
import { api } from "../../api/client.js";
import { useProjectEvents } from "../../api/events.js";
import { formatCost, formatDuration, formatPercent, formatTime } from "../../format.js";
import { Figures } from "../../ui/figures.js";
import { ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { useUrlParams } from "../../url-state.js";
import { CaseText } from "./case-text.js";
import { evalKeys, formatScore } from "./eval-api.js";
import { tracePath } from "./eval-nav.js";
import { PassBadge } from "./pass-badge.js";

export function RunView() {
  const { runId = "" } = useParams<{ runId: string }>();
  const [params, change] = useUrlParams();
  const show = params.get("show") === "failed" ? "failed" : "all";
  const client = useQueryClient();
  const run = useQuery({
    queryKey: evalKeys.run(runId),
    queryFn: ({ signal }) => api<TestRunDetail>(`/testing/runs/${runId}`, { signal }),
  });
  // A run under way is given results as its cases finish: read it again when it changes.
  useProjectEvents((type, data) => {
    const changed = type === "test-run" && (data as { run_id?: unknown }).run_id === runId;
    if (changed || type === "resync")
      void client.invalidateQueries({ queryKey: evalKeys.run(runId) });
  });
  const back = (
    <Link href="/" className="dash-button">
      All test runs
    </Link>
  );
  if (run.isPending) {
    return (
      <>
        <PageHeader title="Test run" actions={back} />
        <Loading label="Loading the run…" />
      </>
    );
  }
  if (run.isError) {
    return (
      <>
        <PageHeader title="Test run" actions={back} />
        <ErrorNotice error={run.error} retry={() => void run.refetch()} />
      </>
    );
  }
  const detail = run.data;
  const { summary } = detail;
  const scorers = Object.keys(summary.mean_scores);
  const results = detail.results
    .map((result, index) => ({ result, number: index + 1 }))
    .filter(({ result }) => show === "all" || !result.passed);
  return (
    <>
      <PageHeader
        title={`Test run ${detail.name}`}
        description={
          <>
            Recorded {formatTime(detail.created_at)}
            {detail.dataset === null ? "" : ` over ${detail.dataset}`}
            {detail.version === null ? "" : `, version ${detail.version}`}; a case passes when every
            score is at least {detail.pass_threshold}.
          </>
        }
        actions={back}
      />
      <Figures
        figures={[
          {
            label: "Pass rate",
            value: formatPercent(summary.pass_rate),
            note: `(${summary.passed} of ${summary.cases})`,
          },
          ...scorers.map((slug) => ({
            label: `${slug} mean`,
            value: formatScore(summary.mean_scores[slug]),
          })),
          { label: "Errors", value: summary.errors },
          {
            label: "Latency p50 / p95",
            value: `${formatDuration(summary.latency_ms.p50)} / ${formatDuration(summary.latency_ms.p95)}`,
          },
          { label: "Cost", value: formatCost(summary.total_cost_usd) },
        ]}
      />
      <section aria-labelledby="eval-cases-title">
        <div className="eval-section-head">
          <h2 id="eval-cases-title">Cases</h2>
          <label className="dash-field eval-inline-field">
            <span>Show</span>
            <select
              value={show}
              onChange={(event) =>
                change({ show: event.currentTarget.value === "failed" ? "failed" : null })
              }
            >
              <option value="all">All cases ({detail.results.length})</option>
              <option value="failed">Failed only ({summary.cases - summary.passed})</option>
            </select>
          </label>
        </div>
        <div className="eval-table-wrap">
          <table className="dash-table eval-cases">
            <caption className="cairn-visually-hidden">
              Cases of the run, with their scores and traces
            </caption>
            <TableHead
              columns={[
                { label: "#", numeric: true },
                "Query",
                "Expected",
                "Output",
                ...scorers.map((slug) => ({ label: slug, numeric: true })),
                "Result",
                { label: "Latency", numeric: true },
                "Trace",
              ]}
            />
            <tbody>
              {results.map(({ result, number }) => (
                <tr key={number}>
                  <td className="dash-num">{number}</td>
                  <th scope="row" className="eval-text-cell">
                    <CaseText text={result.query} />
                  </th>
                  <td className="eval-text-cell">
                    <CaseText text={result.expected_answer} />
                  </td>
                  <td className="eval-text-cell">
                    {result.error === null ? (
                      <CaseText text={result.output} />
                    ) : (
                      <span className="eval-case-error">Error: {result.error}</span>
                    )}
                  </td>
                  {scorers.map((slug) => {
                    const score = result.scores[slug];
                    return (
                      <td key={slug} className="dash-num" title={score?.reason}>
                        {formatScore(score?.score)}
                      </td>
                    );
                  })}
                  <td>
                    <PassBadge passed={result.passed} />
                  </td>
                  <td className="dash-num">{formatDuration(result.latency_ms)}</td>
                  <td>
                    {result.trace_id === null ? (
                      <span className="dash-muted">none</span>
                    ) : (
                      <Link
                        href={tracePath(result.trace_id)}
                        aria-label={`Open trace of case ${number}`}
                      >
                        Open trace
                      </Link>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {results.length === 0 ? <p className="dash-muted">Every case of this run passed.</p> : null}
      </section>
    </>
  );
}
