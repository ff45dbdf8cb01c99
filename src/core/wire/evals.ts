import { z } from "zod";
import { maxSpanCostUsd } from "./export-batch.js";
import { maxMetadataDepth, nestsDeeperThan } from "./metadata.js";

const datasetName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$/, "letters, digits, spaces and . _ : / -")
  .describe("the dataset the cases belong to; default: default");

const caseFields = {
  query: z.string().min(1).max(1_000_000).describe("the input of the case"),
  expected_answer: z.string().max(1_000_000).nullable().optional(),
  metadata: z
    .record(z.string(), z.unknown())
    .refine(
      (metadata) => !nestsDeeperThan(metadata, maxMetadataDepth),
      `must not nest objects and arrays more than ${maxMetadataDepth} levels deep`,
    )
    .optional(),
};

/**
 * `POST /testing/cases`: one case, or many in `cases`. A case is keyed by (dataset, query):
 * posting the same query again updates its expected answer and metadata.
 */
export const createTestCaseRequestSchema = z.strictObject({
  dataset: datasetName.optional(),
  ...caseFields,
});
export const createTestCasesBatchSchema = z.strictObject({
  dataset: datasetName.optional(),
  cases: z.array(z.strictObject(caseFields)).min(1).max(10_000),
});
export const createTestCasesRequestSchema = z.union([
  createTestCaseRequestSchema,
  createTestCasesBatchSchema,
]);

export const testCaseSchema = z.object({
  case_id: z.string().describe("tc_ + 24 hex"),
  dataset: z.string(),
  query: z.string(),
  expected_answer: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const datasetSchema = z.object({
  name: z.string(),
  cases: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** One scorer's verdict on one case. */
export const caseScoreSchema = z.strictObject({
  score: z.number().min(0).max(1).nullable(),
  label: z.string().max(200).optional(),
  reason: z.string().max(10_000),
});

/** One case of a test run, as the runner recorded it. */
export const testResultInputSchema = z.strictObject({
  case_id: z.string().max(64).nullable().optional(),
  query: z.string().max(1_000_000),
  expected_answer: z.string().max(1_000_000).nullable().optional(),
  output: z.string().max(1_000_000).nullable(),
  error: z.string().max(100_000).nullable().optional(),
  scores: z
    .record(
      z
        .string()
        .regex(
          /^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,69}$/,
          "scorer names are 1 to 70 letters, digits, spaces and _ . : -",
        ),
      caseScoreSchema,
    )
    .describe(
      "by scorer name as the run asked for it: correctness was graded by rules, correctness:judge by the LLM judge",
    ),
  latency_ms: z.number().nonnegative(),
  cost_usd: z
    .number()
    .nonnegative()
    .max(maxSpanCostUsd)
    .nullable()
    .optional()
    .describe("USD, at most 1e9 (a span's most), so that a run's total stays a number"),
  trace_id: z.string().max(64).nullable().optional(),
});

/** A run given whole is `finished`; one started `running` is given its results as they come. */
export const testRunStatuses = ["running", "finished"] as const;

/**
 * `POST /testing/runs`: a finished run, case by case, or a run that starts `running` and is given
 * its results as its cases finish (`POST /testing/runs/{run_id}/results`); the summary is
 * computed by the service.
 */
export const createTestRunRequestSchema = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    dataset: datasetName.nullable().optional(),
    version: z.string().min(1).max(64).nullable().optional(),
    pass_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe("a case passes when it has no error and every score is at least this"),
    status: z
      .enum(testRunStatuses)
      .default("finished")
      .describe(
        "running: its results come as its cases finish, with POST /testing/runs/{run_id}/results; finished (the default): the run is given whole",
      ),
    total_cases: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe("how many cases the run has, so that its progress can be shown"),
    results: z.array(testResultInputSchema).max(10_000),
  })
  .refine((run) => run.status === "running" || run.results.length > 0, {
    path: ["results"],
    message: "a finished run needs at least one result (or start it with status: running)",
  });

/**
 * `POST /testing/runs/{run_id}/results`: results of a running run, as its cases finish. `offset`
 * is how many results were sent before these: a request sent again after a lost answer adds
 * nothing twice.
 */
export const addTestResultsRequestSchema = z.strictObject({
  offset: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .describe("how many results of the run were sent before these"),
  results: z.array(testResultInputSchema).max(10_000),
  finished: z
    .boolean()
    .default(false)
    .describe("true with the last results: the run is finished, and takes no more"),
});

export const testResultSchema = z.object({
  case_id: z.string().nullable(),
  query: z.string(),
  expected_answer: z.string().nullable(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  scores: z.record(z.string(), caseScoreSchema),
  latency_ms: z.number(),
  cost_usd: z.number().nullable(),
  trace_id: z.string().nullable(),
  passed: z.boolean(),
});

export const testRunSummarySchema = z.object({
  cases: z.number().int(),
  passed: z.number().int(),
  errors: z.number().int(),
  pass_rate: z.number(),
  mean_scores: z.record(z.string(), z.number().nullable()),
  latency_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  total_cost_usd: z.number().nullable(),
});

export const testRunSchema = z.object({
  run_id: z.string().describe("run_ + 24 hex"),
  name: z.string(),
  dataset: z.string().nullable(),
  version: z.string().nullable(),
  pass_threshold: z.number(),
  created_at: z.string(),
  status: z
    .enum(testRunStatuses)
    .default("finished")
    .describe("running while its results are still coming (absent from older services)"),
  total_cases: z
    .number()
    .int()
    .nullable()
    .default(null)
    .describe("how many cases the run has, when it said so as it started; summary.cases are done"),
  summary: testRunSummarySchema,
});

export const testRunDetailSchema = testRunSchema.extend({ results: z.array(testResultSchema) });

const scoreChangeSchema = z.object({
  base: z.number().nullable(),
  run: z.number().nullable(),
  delta: z.number().nullable(),
});

export const caseChangeSchema = z.object({
  case_id: z.string().nullable(),
  query: z.string(),
  base_passed: z.boolean(),
  run_passed: z.boolean(),
  scores: z.record(z.string(), scoreChangeSchema),
  base_trace_id: z
    .string()
    .nullable()
    .optional()
    .describe("the trace of the case in the base run (absent from older services)"),
  run_trace_id: z
    .string()
    .nullable()
    .optional()
    .describe("the trace of the case in the run (absent from older services)"),
});

/** `GET /testing/runs/{a}/compare/{b}`: what changed from run a (the base) to run b. */
export const testRunComparisonSchema = z.object({
  base: testRunSchema,
  run: testRunSchema,
  regressions: z.array(caseChangeSchema),
  improvements: z.array(caseChangeSchema),
  unchanged: z.number().int(),
  only_in_base: z.array(z.string()),
  only_in_run: z.array(z.string()),
  mean_score_deltas: z.record(z.string(), z.number().nullable()),
  pass_rate_delta: z.number(),
});

export type CreateTestCasesRequest = z.input<typeof createTestCasesRequestSchema>;
export type TestCase = z.infer<typeof testCaseSchema>;
export type Dataset = z.infer<typeof datasetSchema>;
export type CaseScore = z.infer<typeof caseScoreSchema>;
export type TestResultInput = z.input<typeof testResultInputSchema>;
export type CreateTestRunRequest = z.input<typeof createTestRunRequestSchema>;
export type AddTestResultsRequest = z.input<typeof addTestResultsRequestSchema>;
export type TestRunStatus = (typeof testRunStatuses)[number];
export type TestResult = z.infer<typeof testResultSchema>;
export type TestRunSummary = z.infer<typeof testRunSummarySchema>;
export type TestRun = z.infer<typeof testRunSchema>;
export type TestRunDetail = z.infer<typeof testRunDetailSchema>;
export type CaseChange = z.infer<typeof caseChangeSchema>;
export type TestRunComparison = z.infer<typeof testRunComparisonSchema>;
