import { nearestRankPercentiles } from "./percentiles.js";
import type {
  CaseChange,
  CaseScore,
  TestResult,
  TestRunComparison,
  TestRunDetail,
  TestRunSummary,
} from "./wire/evals.js";

/** A case passes when it ran without error and every scorer scored it at least `threshold`. */
export function casePassed(
  result: { error?: string | null | undefined; scores: Readonly<Record<string, CaseScore>> },
  threshold: number,
): boolean {
  if (result.error != null) return false;
  const scores = Object.values(result.scores);
  // An undecided score (null) cannot vouch for the case, and neither can no score at all.
  return (
    scores.length > 0 && scores.every((each) => each.score !== null && each.score >= threshold)
  );
}

/** Pass rate, mean score per scorer, latency percentiles and cost of a run's results. */
export function summarizeResults(results: readonly TestResult[]): TestRunSummary {
  const sums = new Map<string, { total: number; count: number }>();
  let passed = 0;
  let errors = 0;
  let cost = 0;
  let costed = 0;
  const latencies = new Float64Array(results.length);
  for (const [index, result] of results.entries()) {
    if (result.passed) passed++;
    if (result.error !== null) errors++;
    if (result.cost_usd !== null) {
      cost += result.cost_usd;
      costed++;
    }
    latencies[index] = result.latency_ms;
    for (const [slug, each] of Object.entries(result.scores)) {
      const sum = sums.get(slug) ?? { total: 0, count: 0 };
      if (each.score !== null) {
        sum.total += each.score;
        sum.count++;
      }
      sums.set(slug, sum);
    }
  }
  const [p50, p95] = nearestRankPercentiles(latencies, [50, 95]);
  return {
    cases: results.length,
    passed,
    errors,
    pass_rate: results.length === 0 ? 0 : passed / results.length,
    mean_scores: Object.fromEntries(
      [...sums].map(([slug, sum]) => [slug, sum.count === 0 ? null : sum.total / sum.count]),
    ),
    latency_ms: { p50: p50 ?? null, p95: p95 ?? null },
    total_cost_usd: costed === 0 ? null : cost,
  };
}

/** Cases are matched by case id, else by their query. */
function caseKey(result: TestResult): string {
  return result.case_id !== null ? `id:${result.case_id}` : `query:${result.query}`;
}

/**
 * What changed from `base` to `run`, case by case: a regression is a case that passed and now
 * fails, or whose score on some scorer dropped by more than `tolerance`; an improvement is the
 * reverse. A case that did both counts as a regression.
 */
export function compareRuns(
  base: TestRunDetail,
  run: TestRunDetail,
  tolerance = 0.05,
): TestRunComparison {
  const baseCases = new Map(base.results.map((result) => [caseKey(result), result]));
  const regressions: CaseChange[] = [];
  const improvements: CaseChange[] = [];
  const onlyInRun: string[] = [];
  let unchanged = 0;
  const seen = new Set<string>();
  for (const after of run.results) {
    const key = caseKey(after);
    const before = baseCases.get(key);
    if (before === undefined) {
      onlyInRun.push(after.query);
      continue;
    }
    seen.add(key);
    const change = describeChange(before, after);
    const deltas = Object.values(change.scores).map((each) => each.delta);
    const worse =
      (before.passed && !after.passed) ||
      deltas.some((delta) => delta !== null && delta < -tolerance) ||
      Object.values(change.scores).some((each) => each.base !== null && each.run === null);
    const better =
      (!before.passed && after.passed) ||
      deltas.some((delta) => delta !== null && delta > tolerance);
    if (worse) regressions.push(change);
    else if (better) improvements.push(change);
    else unchanged++;
  }
  const onlyInBase = base.results
    .filter((result) => !seen.has(caseKey(result)))
    .map((result) => result.query);
  const slugs = new Set([
    ...Object.keys(base.summary.mean_scores),
    ...Object.keys(run.summary.mean_scores),
  ]);
  const meanDeltas = Object.fromEntries(
    [...slugs].map((slug) => {
      const before = base.summary.mean_scores[slug];
      const after = run.summary.mean_scores[slug];
      return [slug, before == null || after == null ? null : after - before];
    }),
  );
  const { results: _baseResults, ...baseRun } = base;
  const { results: _runResults, ...thisRun } = run;
  return {
    base: baseRun,
    run: thisRun,
    // The largest drop first: what to look at.
    regressions: regressions.sort((a, b) => largestDelta(a) - largestDelta(b)),
    improvements: improvements.sort((a, b) => largestDelta(b) - largestDelta(a)),
    unchanged,
    only_in_base: onlyInBase,
    only_in_run: onlyInRun,
    mean_score_deltas: meanDeltas,
    pass_rate_delta: run.summary.pass_rate - base.summary.pass_rate,
  };
}

function describeChange(before: TestResult, after: TestResult): CaseChange {
  const slugs = new Set([...Object.keys(before.scores), ...Object.keys(after.scores)]);
  const scores: CaseChange["scores"] = {};
  for (const slug of slugs) {
    const was = before.scores[slug]?.score ?? null;
    const now = after.scores[slug]?.score ?? null;
    scores[slug] = { base: was, run: now, delta: was === null || now === null ? null : now - was };
  }
  return {
    case_id: after.case_id ?? before.case_id,
    query: after.query,
    base_passed: before.passed,
    run_passed: after.passed,
    scores,
    base_trace_id: before.trace_id,
    run_trace_id: after.trace_id,
  };
}

/** The most negative delta of a change for sorting regressions (most positive for improvements). */
function largestDelta(change: CaseChange): number {
  const deltas = Object.values(change.scores)
    .map((each) => each.delta)
    .filter((delta): delta is number => delta !== null);
  if (deltas.length === 0) return 0;
  return deltas.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a));
}
