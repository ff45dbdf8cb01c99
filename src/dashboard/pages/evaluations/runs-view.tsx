// The test runs, newest first, with pass rate and each scorer's mean; two of them chosen (base and
// run) to compare. A run recorded while the page is open appears at once (the project's events).

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "wouter";
import type { TestRun } from "../../../core/wire/evals.js";
import { api, queryString } from "../../api/client.js";
import { useProjectEvents } from "../../api/events.js";
import { formatCost, formatDuration, formatPercent, formatTime } from "../../format.js";
import { CursorPager } from "../../ui/cursor-pager.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { TableHead } from "../../ui/table-head.js";
import { useUrlParams } from "../../url-state.js";
import { evalKeys, formatScore, type RunPage, scorersOf } from "./eval-api.js";
import { EvalNav } from "./eval-nav.js";

export function RunsView() {
  const [params, change] = useUrlParams();
  const client = useQueryClient();
  const cursor = params.get("cursor") ?? undefined;
  const runs = useQuery({
    queryKey: [...evalKeys.runs, cursor],
    queryFn: ({ signal }) =>
      api<RunPage>(`/testing/runs${queryString({ limit: 50, cursor })}`, { signal }),
    placeholderData: keepPreviousData,
  });
  const [recorded, setRecorded] = useState<string | undefined>(undefined);
  useProjectEvents((type, data) => {
    if (type !== "test-run" && type !== "resync") return;
    void client.invalidateQueries({ queryKey: evalKeys.runs });
    const run = data as Partial<TestRun & Progress>;
    if (type === "test-run" && typeof run.name === "string" && run.summary !== undefined) {
      setRecorded(
        run.status === "running"
          ? `Test run ${run.name}: ${run.summary.cases}${run.total_cases == null ? "" : ` of ${run.total_cases}`} cases done.`
          : `Test run ${run.name} recorded: ${formatPercent(run.summary.pass_rate)} of ${run.summary.cases} cases passed.`,
      );
    }
  });

  const list = runs.data?.runs ?? [];
  const base = params.get("base") ?? list[1]?.run_id;
  const run = params.get("run") ?? list[0]?.run_id;
  const choose = (name: "base" | "run", runId: string) =>
    change({ [name]: runId }, { replace: true });
  const canCompare = base !== undefined && run !== undefined && base !== run;
  return (
    <>
      <PageHeader
        title="Evaluations"
        description="Test runs over your datasets, their pass rates and scores; compare two to see what regressed."
      />
      <EvalNav />
      <p role="status" className="eval-live">
        {recorded ?? ""}
      </p>
      {runs.isPending ? (
        <Loading label="Loading test runs…" />
      ) : runs.isError ? (
        <ErrorNotice error={runs.error} retry={() => void runs.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState title="No test runs yet">
          Run <code>cairn test</code> or <code>runTests()</code> over a dataset; each run is listed
          here with its pass rate.
        </EmptyState>
      ) : (
        <section aria-labelledby="eval-runs-title">
          <div className="eval-section-head">
            <h2 id="eval-runs-title">Test runs</h2>
            <div className="eval-compare-action">
              {canCompare ? (
                <Link
                  className="dash-button dash-primary"
                  href={`/compare${queryString({ base, run })}`}
                >
                  Compare the chosen runs
                </Link>
              ) : (
                <span className="dash-muted">Choose a base run and another run to compare.</span>
              )}
            </div>
          </div>
          <RunTable runs={list} base={base} run={run} onChoose={choose} />
          <CursorPager
            cursor={cursor}
            next={runs.data?.next_cursor}
            label="Pages of test runs"
            onPage={(next) => change({ cursor: next })}
          />
        </section>
      )}
    </>
  );
}

function RunTable(props: {
  runs: readonly TestRun[];
  base: string | undefined;
  run: string | undefined;
  onChoose: (name: "base" | "run", runId: string) => void;
}) {
  const scorers = scorersOf(props.runs);
  return (
    <div className="eval-table-wrap">
      <table className="dash-table">
        <caption className="cairn-visually-hidden">
          Test runs, the newest first, with the base and the run to compare
        </caption>
        <TableHead
          columns={[
            "Base",
            "Run",
            "Name",
            "Dataset",
            "Version",
            "Recorded",
            { label: "Pass rate", numeric: true },
            ...scorers.map((slug) => ({ label: `${slug} mean`, numeric: true })),
            { label: "p50 latency", numeric: true },
            { label: "Cost", numeric: true },
          ]}
        />
        <tbody>
          {props.runs.map((run) => (
            <tr key={run.run_id}>
              {(["base", "run"] as const).map((role) => (
                <td key={role}>
                  <input
                    type="radio"
                    name={`compare-${role}`}
                    checked={props[role] === run.run_id}
                    onChange={() => props.onChoose(role, run.run_id)}
                    aria-label={
                      role === "base"
                        ? `Use ${run.name} as the base`
                        : `Compare ${run.name} with the base`
                    }
                  />
                </td>
              ))}
              <th scope="row" className="eval-run-name">
                <Link href={`/runs/${run.run_id}`}>{run.name}</Link> <RunProgress run={run} />
              </th>
              <td>
                {run.dataset === null ? (
                  <span className="dash-muted">—</span>
                ) : (
                  <Link href={`/datasets/${encodeURIComponent(run.dataset)}`}>{run.dataset}</Link>
                )}
              </td>
              <td>{run.version ?? <span className="dash-muted">—</span>}</td>
              <td>{formatTime(run.created_at)}</td>
              <td className="dash-num">
                {formatPercent(run.summary.pass_rate)}{" "}
                <span className="dash-muted">
                  ({run.summary.passed}/{run.summary.cases})
                </span>
              </td>
              {scorers.map((slug) => (
                <td key={slug} className="dash-num">
                  {formatScore(run.summary.mean_scores[slug])}
                </td>
              ))}
              <td className="dash-num">{formatDuration(run.summary.latency_ms.p50)}</td>
              <td className="dash-num">{formatCost(run.summary.total_cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A run still given its results as its cases finish (services that have such runs). */
interface Progress {
  readonly status?: string;
  readonly total_cases?: number | null;
}

/** "Running: 3 of 10 cases" while a run is under way; nothing once it is finished. */
function RunProgress(props: { run: TestRun }) {
  const { status, total_cases: total } = props.run as TestRun & Progress;
  if (status !== "running") return null;
  const done = props.run.summary.cases;
  return (
    <span className="dash-badge" data-tone="running">
      Running: {done}
      {total == null ? "" : ` of ${total}`} cases
    </span>
  );
}
