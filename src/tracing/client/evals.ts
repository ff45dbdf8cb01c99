import { z } from "zod";
import { ConfigurationError } from "../../core/errors/index.js";
import {
  type AddTestResultsRequest,
  type CreateTestRunRequest,
  type Dataset,
  datasetSchema,
  type TestCase,
  type TestRun,
  type TestRunComparison,
  type TestRunDetail,
  testCaseSchema,
  testRunComparisonSchema,
  testRunDetailSchema,
  testRunSchema,
} from "../../core/wire/evals.js";
import { describeIssues } from "../../core/zod-message.js";
import { requestService } from "./request.js";

const caseListSchema = z.object({ cases: z.array(testCaseSchema) });

/**
 * A test case as the SDK takes it: `query` and `expected_answer` as the API names them, or
 * `input` and `expected_output`.
 */
export interface TestCaseInput {
  query?: string;
  input?: string;
  expected_answer?: string | null;
  expected_output?: string | null;
  metadata?: Record<string, unknown>;
}

const caseInputSchema = z
  .strictObject({
    query: z.string().min(1).optional(),
    input: z.string().min(1).optional(),
    expected_answer: z.string().nullable().optional(),
    expected_output: z.string().nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((each) => (each.query === undefined) !== (each.input === undefined), {
    message: "give the case's query (or input), once",
  })
  .refine((each) => each.expected_answer === undefined || each.expected_output === undefined, {
    message: "give expected_answer or expected_output, not both",
  });

/** A case in the API's names; throws a ConfigurationError naming the bad case. */
export function toApiCase(each: TestCaseInput, index: number, where: string) {
  const parsed = caseInputSchema.safeParse(each);
  if (!parsed.success) {
    throw new ConfigurationError(`${where}: case ${index}: ${describeIssues(parsed.error)}`);
  }
  const { query, input, expected_answer, expected_output, metadata } = parsed.data;
  return {
    query: (query ?? input) as string,
    expected_answer: expected_answer ?? expected_output ?? null,
    ...(metadata === undefined ? {} : { metadata }),
  };
}

/**
 * Adds cases to a dataset on the service (default dataset: `default`). A case is keyed by its
 * query: adding the same query again updates its expected answer.
 *
 * @example
 * await createTestCases("refunds", [
 *   { input: "How long do refunds take?", expected_output: "5 business days" },
 * ]);
 */
export async function createTestCases(
  dataset: string,
  cases: readonly TestCaseInput[],
): Promise<TestCase[]> {
  const body = {
    dataset,
    cases: cases.map((each, index) => toApiCase(each, index, "createTestCases()")),
  };
  const answer = await requestService("POST", "/testing/cases", body, caseListSchema);
  return answer.cases;
}

/** The cases of a dataset, oldest first. */
export async function listTestCases(dataset?: string): Promise<TestCase[]> {
  const query = dataset === undefined ? "" : `?dataset=${encodeURIComponent(dataset)}`;
  const answer = await requestService("GET", `/testing/cases${query}`, undefined, caseListSchema);
  return answer.cases;
}

/** The datasets of the project, with their number of cases. */
export async function listDatasets(): Promise<Dataset[]> {
  const datasets = z.object({ datasets: z.array(datasetSchema) });
  return (await requestService("GET", "/testing/datasets", undefined, datasets)).datasets;
}

/** Records a finished test run (`runTests()` does this for you). */
export function recordTestRun(run: CreateTestRunRequest): Promise<TestRunDetail> {
  return requestService("POST", "/testing/runs", run, testRunDetailSchema);
}

/**
 * Starts a run that is given its results as its cases finish ({@link addTestResults}), so that
 * its progress shows meanwhile (`runTests()` does this for you).
 */
export function startTestRun(
  run: Omit<CreateTestRunRequest, "status" | "results">,
): Promise<TestRunDetail> {
  const body = { ...run, status: "running", results: [] };
  return requestService("POST", "/testing/runs", body, testRunDetailSchema);
}

/** Adds results to a run {@link startTestRun} started; `finished: true` with the last ones. */
export function addTestResults(runId: string, request: AddTestResultsRequest): Promise<TestRun> {
  const path = `/testing/runs/${encodeURIComponent(runId)}/results`;
  return requestService("POST", path, request, testRunSchema);
}

/** A test run with its results, case by case. */
export function getTestRun(runId: string): Promise<TestRunDetail> {
  const path = `/testing/runs/${encodeURIComponent(runId)}`;
  return requestService("GET", path, undefined, testRunDetailSchema);
}

/** The latest test runs, newest first, without their results. */
export async function listTestRuns(limit = 50): Promise<TestRun[]> {
  const runs = z.object({ runs: z.array(testRunSchema) });
  return (await requestService("GET", `/testing/runs?limit=${limit}`, undefined, runs)).runs;
}

/**
 * What changed from `baseRunId` to `runId`: regressions and improvements case by case, and the
 * change of each scorer's mean and of the pass rate.
 */
export function compareTestRuns(baseRunId: string, runId: string): Promise<TestRunComparison> {
  return requestService(
    "GET",
    `/testing/runs/${encodeURIComponent(baseRunId)}/compare/${encodeURIComponent(runId)}`,
    undefined,
    testRunComparisonSchema,
  );
}
