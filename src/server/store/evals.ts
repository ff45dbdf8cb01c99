import { randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { casePassed, summarizeResults } from "../../core/eval-runs.js";
import type {
  Dataset,
  TestCase,
  TestResult,
  TestRun,
  TestRunDetail,
  TestRunStatus,
} from "../../core/wire/evals.js";
import { transaction } from "./database.js";

export interface CaseInput {
  readonly query: string;
  readonly expected_answer?: string | null | undefined;
  readonly metadata?: Record<string, unknown> | undefined;
}

/** One case's result as a runner sends it: whether it passed is decided here. */
export interface ResultInput {
  readonly case_id?: string | null | undefined;
  readonly query: string;
  readonly expected_answer?: string | null | undefined;
  readonly output: string | null;
  readonly error?: string | null | undefined;
  readonly scores: TestResult["scores"];
  readonly latency_ms: number;
  readonly cost_usd?: number | null | undefined;
  readonly trace_id?: string | null | undefined;
}

export interface RunInput {
  readonly name?: string | undefined;
  readonly dataset?: string | null | undefined;
  readonly version?: string | null | undefined;
  readonly pass_threshold: number;
  /** Default finished: the run is given whole. */
  readonly status?: TestRunStatus | undefined;
  readonly total_cases?: number | undefined;
  readonly results: readonly ResultInput[];
}

/** Results of a running run, as its cases finish (`POST /testing/runs/{run_id}/results`). */
export interface ResultsInput {
  /** How many results were sent before these: those already stored are not stored again. */
  readonly offset: number;
  readonly results: readonly ResultInput[];
  readonly finished: boolean;
}

/** Why results were not added: no such run, a finished one, results missing before them… */
export type ResultsRefusal =
  | { readonly refused: "not_found" | "finished" | "too_many" | "too_large" | "empty" }
  | { readonly refused: "gap"; readonly stored: number };

/** The most results a run has, given whole or bit by bit. */
export const maxRunResults = 10_000;
/** The most characters a run's results take as JSON, given bit by bit (whole: the body limit). */
const maxResultsLength = 32 * 1024 * 1024;

/** A test case's row, as both engines store it. */
export interface CaseRow {
  id: string;
  dataset: string;
  query: string;
  expected_answer: string | null;
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A test run's row, as both engines store it. */
export interface RunRow {
  id: string;
  name: string;
  dataset: string | null;
  version: string | null;
  pass_threshold: number;
  created_at: string;
  status: TestRunStatus;
  total_cases: number | null;
  summary: string;
  results: string;
}

/** Test cases grouped in named datasets, and the runs made over them. */
export class EvalStore {
  constructor(private readonly db: DatabaseSync) {}

  /**
   * Adds cases to a dataset. A case is keyed by its query: posting the same query again updates
   * its expected answer and metadata, and keeps its id.
   */
  upsertCases(projectId: string, dataset: string, cases: readonly CaseInput[]): TestCase[] {
    const upsert = this.db.prepare(`
      INSERT INTO test_cases (id, project_id, dataset, query, expected_answer, metadata,
        created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, dataset, query) DO UPDATE SET
        expected_answer = excluded.expected_answer,
        metadata = excluded.metadata,
        updated_at = excluded.updated_at
      RETURNING *`);
    const unique = latestByQuery(cases);
    return transaction(this.db, () => {
      const now = new Date().toISOString();
      return unique.map((each) => {
        const row = upsert.get(
          `tc_${randomBytes(12).toString("hex")}`,
          projectId,
          dataset,
          each.query,
          each.expected_answer ?? null,
          JSON.stringify(each.metadata ?? {}),
          now,
          now,
        ) as unknown as CaseRow;
        return toCase(row);
      });
    });
  }

  /** The cases of a dataset (every dataset when undefined), oldest first. */
  cases(projectId: string, dataset?: string): TestCase[] {
    const rows = (dataset === undefined
      ? this.db
          .prepare("SELECT * FROM test_cases WHERE project_id = ? ORDER BY dataset, rowid")
          .all(projectId)
      : this.db
          .prepare("SELECT * FROM test_cases WHERE project_id = ? AND dataset = ? ORDER BY rowid")
          .all(projectId, dataset)) as unknown as CaseRow[];
    return rows.map(toCase);
  }

  datasets(projectId: string): Dataset[] {
    return this.db
      .prepare(`
        SELECT dataset AS name, count(*) AS cases, min(created_at) AS created_at,
          max(updated_at) AS updated_at
        FROM test_cases WHERE project_id = ? GROUP BY dataset ORDER BY dataset`)
      .all(projectId) as unknown as Dataset[];
  }

  /**
   * Records a run, finished or starting (`status: "running"`); each case's pass and the summary
   * are computed here.
   */
  addRun(projectId: string, input: RunInput): TestRunDetail {
    const run = newRun(input);
    this.db
      .prepare(`
        INSERT INTO test_runs (id, project_id, name, dataset, version, pass_threshold,
          created_at, summary, results, status, total_cases)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        run.run_id,
        projectId,
        run.name,
        run.dataset,
        run.version,
        run.pass_threshold,
        run.created_at,
        JSON.stringify(run.summary),
        JSON.stringify(run.results),
        run.status,
        run.total_cases,
      );
    return run;
  }

  /**
   * Adds results to a running run, and finishes it with `finished`. Results the run has already
   * (a request sent again) are skipped; a request that would leave a gap is refused.
   */
  addResults(projectId: string, runId: string, input: ResultsInput): TestRun | ResultsRefusal {
    return transaction(this.db, () => {
      const row = this.db
        .prepare("SELECT * FROM test_runs WHERE project_id = ? AND id = ?")
        .get(projectId, runId) as unknown as RunRow | undefined;
      if (row === undefined) return { refused: "not_found" };
      const outcome = addedResults(row, input);
      if ("refused" in outcome) return outcome;
      const { write } = outcome;
      if (write !== undefined) {
        this.db
          .prepare(
            "UPDATE test_runs SET status = ?, summary = ?, results = ? WHERE project_id = ? AND id = ?",
          )
          .run(write.status, write.summary, write.results, projectId, runId);
      }
      return outcome.run;
    });
  }

  run(projectId: string, runId: string): TestRunDetail | undefined {
    const row = this.db
      .prepare("SELECT * FROM test_runs WHERE project_id = ? AND id = ?")
      .get(projectId, runId) as unknown as RunRow | undefined;
    if (row === undefined) return undefined;
    return { ...toRun(row), results: JSON.parse(row.results) as TestResult[] };
  }

  /** A page of runs, newest first, without their results, and where the next page starts. */
  runPage(
    projectId: string,
    page: { limit: number; cursor?: RunCursor | undefined },
  ): { runs: TestRun[]; next: RunCursor | null } {
    const values: Array<string | number> = [projectId];
    let after = "";
    if (page.cursor !== undefined) {
      after = "AND (created_at < ? OR (created_at = ? AND rowid < ?))";
      values.push(page.cursor.createdAt, page.cursor.createdAt, page.cursor.row);
    }
    const rows = this.db
      .prepare(`
        SELECT rowid AS row, id, name, dataset, version, pass_threshold, created_at, status,
          total_cases, summary
        FROM test_runs WHERE project_id = ? ${after}
        ORDER BY created_at DESC, rowid DESC LIMIT ?`)
      .all(...values, page.limit + 1) as unknown as Array<RunRow & { row: number }>;
    return pageOfRuns(rows, page.limit);
  }
}

/** Where a page of runs ended: its last run's creation time and row. */
export interface RunCursor {
  readonly createdAt: string;
  readonly row: number;
}

/** The same query twice in one request: the last one is the case, as with two requests. */
export function latestByQuery(cases: readonly CaseInput[]): CaseInput[] {
  return [...new Map(cases.map((each) => [each.query, each])).values()];
}

/** A new run as it is stored and answered: each case's pass and the summary computed. */
export function newRun(input: RunInput): TestRunDetail {
  const results = input.results.map((each) => toResult(each, input.pass_threshold));
  const createdAt = new Date().toISOString();
  return {
    run_id: `run_${randomBytes(12).toString("hex")}`,
    name: input.name ?? `run ${createdAt}`,
    dataset: input.dataset ?? null,
    version: input.version ?? null,
    pass_threshold: input.pass_threshold,
    created_at: createdAt,
    status: input.status ?? "finished",
    total_cases: input.total_cases ?? null,
    summary: summarizeResults(results),
    results,
  };
}

/**
 * What adding results to a stored run comes to: the run as answered, with the row to write when
 * it changes (none when the finishing request came again after its answer was lost), or why the
 * results are refused. Results the run has already (a request sent again) are skipped.
 */
export function addedResults(
  row: RunRow,
  input: ResultsInput,
): ResultsRefusal | { readonly run: TestRun; readonly write?: RunRow } {
  const stored = JSON.parse(row.results) as TestResult[];
  const end = input.offset + input.results.length;
  if (row.status === "finished") {
    // The answer to the finishing request was lost, and it came again.
    const again = input.finished && end === stored.length;
    return again ? { run: toRun(row) } : { refused: "finished" };
  }
  if (input.offset > stored.length) return { refused: "gap", stored: stored.length };
  const added = input.results
    .slice(stored.length - input.offset)
    .map((each) => toResult(each, row.pass_threshold));
  const results = [...stored, ...added];
  if (results.length > maxRunResults) return { refused: "too_many" };
  if (input.finished && results.length === 0) return { refused: "empty" };
  const json = JSON.stringify(results);
  if (json.length > maxResultsLength) return { refused: "too_large" };
  const write: RunRow = {
    ...row,
    status: input.finished ? "finished" : "running",
    summary: JSON.stringify(summarizeResults(results)),
    results: json,
  };
  return { run: toRun(write), write };
}

/** A page of `limit` runs from rows read one beyond it, and where the next page starts. */
export function pageOfRuns(
  rows: ReadonlyArray<RunRow & { row: number }>,
  limit: number,
): { runs: TestRun[]; next: RunCursor | null } {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return {
    runs: shown.map(toRun),
    next:
      rows.length > limit && last !== undefined
        ? { createdAt: last.created_at, row: last.row }
        : null,
  };
}

export function toCase(row: CaseRow): TestCase {
  return {
    case_id: row.id,
    dataset: row.dataset,
    query: row.query,
    expected_answer: row.expected_answer,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toRun(row: RunRow): TestRun {
  return {
    run_id: row.id,
    name: row.name,
    dataset: row.dataset,
    version: row.version,
    pass_threshold: row.pass_threshold,
    created_at: row.created_at,
    status: row.status,
    total_cases: row.total_cases,
    summary: JSON.parse(row.summary) as TestRun["summary"],
  };
}

function toResult(each: ResultInput, passThreshold: number): TestResult {
  return {
    case_id: each.case_id ?? null,
    query: each.query,
    expected_answer: each.expected_answer ?? null,
    output: each.output,
    error: each.error ?? null,
    scores: each.scores,
    latency_ms: each.latency_ms,
    cost_usd: each.cost_usd ?? null,
    trace_id: each.trace_id ?? null,
    passed: casePassed(each, passThreshold),
  };
}
