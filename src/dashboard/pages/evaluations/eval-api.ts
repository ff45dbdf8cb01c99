// The evaluation API's answers as the pages read them, and their query keys.

import type { TestRun } from "../../../core/wire/evals.js";

/** `GET /testing/runs`: a page of runs; next_cursor from services that page them. */
export interface RunPage {
  readonly runs: TestRun[];
  readonly next_cursor?: string | null;
}

export const evalKeys = {
  runs: ["testing", "runs"] as const,
  run: (runId: string) => ["testing", "run", runId] as const,
  comparison: (base: string, run: string) => ["testing", "compare", base, run] as const,
  datasets: ["testing", "datasets"] as const,
  cases: (dataset: string) => ["testing", "cases", dataset] as const,
};

/** The scorers of some runs, in the order first seen. */
export function scorersOf(runs: readonly { summary: { mean_scores: object } }[]): string[] {
  const slugs = new Set<string>();
  for (const run of runs) for (const slug of Object.keys(run.summary.mean_scores)) slugs.add(slug);
  return [...slugs];
}

/** A score from 0 to 1, as 0.87. */
export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined || !Number.isFinite(score) ? "—" : score.toFixed(2);
}
