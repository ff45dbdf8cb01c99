// Two test runs compared case by case: the pass rate and each scorer's mean before and after,
// the cases that regressed and those that improved (each named so in words, not by colour
// alone), with both traces of each case, and the cases only one run has.

import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import type { TestRun, TestRunComparison } from "../../../core/wire/evals.js";
import { api, queryString } from "../../api/client.js";
import { formatPercent, formatTime } from "../../format.js";
import { ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { useUrlParams } from "../../url-state.js";
import { ChangeTable } from "./change-table.js";
import { Delta } from "./delta.js";
import { evalKeys, formatScore, type RunPage } from "./eval-api.js";

const runIdPattern = /^run_[0-9a-f]{24}$/;

export function CompareView() {
  const [params, change] = useUrlParams();
  const base = params.get("base") ?? "";
  const run = params.get("run") ?? "";
  const valid = runIdPattern.test(base) && runIdPattern.test(run);
  const comparison = useQuery({
    queryKey: evalKeys.comparison(base, run),
    queryFn: ({ signal }) =>
      api<TestRunComparison>(`/testing/runs/${base}/compare/${run}`, { signal }),
    enabled: valid,
  });
  const back = (
    <Link href={`/${queryString({ base, run })}`} className="dash-button">
      All test runs
    </Link>
  );
  return (
    <>
      <PageHeader
        title="Compare test runs"
        description={
          comparison.data === undefined
            ? "What changed from a base run to another, case by case."
            : `From ${comparison.data.base.name} (base) to ${comparison.data.run.name}.`
        }
        actions={back}
      />
      <RunChooser base={base} run={run} onChoose={(changes) => change(changes)} />
      {!valid ? (
        <p className="dash-muted">Choose a base run and a run to compare it with.</p>
      ) : comparison.isPending ? (
        <Loading label="Comparing…" />
      ) : comparison.isError ? (
        <ErrorNotice error={comparison.error} retry={() => void comparison.refetch()} />
      ) : (
        <ComparisonReport comparison={comparison.data} />
      )}
    </>
  );
}

function ComparisonReport(props: { comparison: TestRunComparison }) {
  const { comparison } = props;
  const slugs = Object.keys(comparison.mean_score_deltas);
  return (
    <>
      <section aria-labelledby="compare-overall">
        <h2 id="compare-overall">Overall</h2>
        <p className="compare-counts">
          <span
            className="dash-badge"
            data-tone={comparison.regressions.length > 0 ? "bad" : undefined}
          >
            {comparison.regressions.length}{" "}
            {comparison.regressions.length === 1 ? "regression" : "regressions"}
          </span>{" "}
          <span
            className="dash-badge"
            data-tone={comparison.improvements.length > 0 ? "good" : undefined}
          >
            {comparison.improvements.length}{" "}
            {comparison.improvements.length === 1 ? "improvement" : "improvements"}
          </span>{" "}
          <span className="dash-badge">{comparison.unchanged} unchanged</span>
        </p>
        <table className="dash-table compare-means">
          <caption className="cairn-visually-hidden">
            Pass rate and mean scores, base and run
          </caption>
          <TableHead
            columns={[
              "Measure",
              { label: `Base (${comparison.base.name})`, numeric: true },
              { label: `Run (${comparison.run.name})`, numeric: true },
              "Change",
            ]}
          />
          <tbody>
            <tr>
              <th scope="row">Pass rate</th>
              <td className="dash-num">{formatPercent(comparison.base.summary.pass_rate)}</td>
              <td className="dash-num">{formatPercent(comparison.run.summary.pass_rate)}</td>
              <td>
                <Delta value={comparison.pass_rate_delta} percent />
              </td>
            </tr>
            {slugs.map((slug) => (
              <tr key={slug}>
                <th scope="row">{slug} mean</th>
                <td className="dash-num">
                  {formatScore(comparison.base.summary.mean_scores[slug])}
                </td>
                <td className="dash-num">
                  {formatScore(comparison.run.summary.mean_scores[slug])}
                </td>
                <td>
                  <Delta value={comparison.mean_score_deltas[slug] ?? null} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <ChangeTable kind="regression" changes={comparison.regressions} />
      <ChangeTable kind="improvement" changes={comparison.improvements} />
      {comparison.only_in_base.length + comparison.only_in_run.length === 0 ? null : (
        <section aria-labelledby="compare-unmatched">
          <h2 id="compare-unmatched">Cases in one run only</h2>
          {comparison.only_in_base.length === 0 ? null : (
            <>
              <h3>Only in the base ({comparison.only_in_base.length})</h3>
              <ul className="compare-only">
                {comparison.only_in_base.map((query, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: two cases may share a query
                  <li key={index}>{query}</li>
                ))}
              </ul>
            </>
          )}
          {comparison.only_in_run.length === 0 ? null : (
            <>
              <h3>Only in the run ({comparison.only_in_run.length})</h3>
              <ul className="compare-only">
                {comparison.only_in_run.map((query, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: two cases may share a query
                  <li key={index}>{query}</li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}
    </>
  );
}

/** The two runs, chosen among the latest 200. */
function RunChooser(props: {
  base: string;
  run: string;
  onChoose: (changes: { base?: string; run?: string }) => void;
}) {
  const runs = useQuery({
    queryKey: [...evalKeys.runs, "chooser"],
    queryFn: ({ signal }) => api<RunPage>("/testing/runs?limit=200", { signal }),
  });
  const options = runs.data?.runs ?? [];
  return (
    <form className="compare-chooser" aria-label="Runs to compare">
      <RunSelect
        label="Base run"
        value={props.base}
        runs={options}
        onChange={(base) => props.onChoose({ base })}
      />
      <span aria-hidden="true" className="compare-arrow">
        →
      </span>
      <RunSelect
        label="Run"
        value={props.run}
        runs={options}
        onChange={(run) => props.onChoose({ run })}
      />
      <button
        type="button"
        className="dash-button"
        disabled={props.base === "" || props.run === ""}
        onClick={() => props.onChoose({ base: props.run, run: props.base })}
      >
        Swap
      </button>
    </form>
  );
}

function RunSelect(props: {
  label: string;
  value: string;
  runs: readonly TestRun[];
  onChange: (runId: string) => void;
}) {
  const listed = props.value === "" || props.runs.some((each) => each.run_id === props.value);
  return (
    <label className="dash-field">
      <span>{props.label}</span>
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
        <option value="">Choose…</option>
        {/* A run older than the latest 200, chosen by its address. */}
        {listed ? null : <option value={props.value}>{props.value}</option>}
        {props.runs.map((each) => (
          <option key={each.run_id} value={each.run_id}>
            {each.name} ({formatTime(each.created_at)})
          </option>
        ))}
      </select>
    </label>
  );
}
