import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  addTestResultsRequestSchema,
  createTestCasesRequestSchema,
  createTestRunRequestSchema,
  datasetSchema,
  testCaseSchema,
  testRunComparisonSchema,
  testRunDetailSchema,
  testRunSchema,
} from "../../core/wire/evals.js";
import {
  computeScoreRequestSchema,
  givenScoreRequestSchema,
  judgeScoreRequestSchema,
  judgeVerdictSchema,
  scoreSchema,
} from "../../core/wire/scores.js";
import { casesQuerySchema, runsQuerySchema } from "../routes/evals.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const body = (schema: z.ZodType) => ({
  body: { content: { "application/json": { schema } } },
});
const runId = z.string().describe("run_ + 24 hex");

/** The scoring and eval routes (test cases, datasets, runs) of the OpenAPI document. */
export function evaluationRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  return [
    {
      method: "post",
      path: "/scores",
      summary: "Score a trace: compute a scorer on what it recorded, or record a given score",
      description:
        "With scorer_slug, the service runs the scorer (correctness, faithfulness, toxicity, helpfulness, or one of its own) on the root span's input, output and expected output (or span_id's), with the documents of the trace's retrieval spans as context. Without it, {name, value, comment} records a score given by a person. Scores are 0 to 1, higher is better.\n\nThe judge is asked for, never implied: a plain slug (correctness) grades by rules and never calls the LLM judge, even on a service that has one; a slug ending in :judge (correctness:judge, faithfulness:judge, toxicity:judge, helpfulness:judge, or one of the service's scorers) has the judge grade. The score is stored under the slug as asked, and scored_by says who graded: scorer:<slug> for rules, judge:<model> for the judge. helpfulness has no rules: without :judge it is a 400. :judge on a service without a judge (CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY, CAIRN_JUDGE_MODEL) is a 503 unavailable; nothing is stored on either error.",
      request: body(z.union([computeScoreRequestSchema, givenScoreRequestSchema])),
      responses: {
        201: json(scoreSchema, "the stored score"),
        ...errors("invalid_request", "not_found", "unsupported_media_type", "bad_gateway"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/traces/{trace_id}/scores",
      summary: "The scores of a trace, oldest first",
      request: { params: z.object({ trace_id: z.string() }) },
      responses: {
        200: json(z.object({ trace_id: z.string(), scores: z.array(scoreSchema) }), "scores"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/scores/judge",
      summary: "Grade with the LLM judge, by a scorer or by criteria",
      description:
        "Texts may be given, or read from trace_id (then the verdict is stored on the trace). This route always asks the judge: scorer_slug correctness and correctness:judge both grade with it, and the score is stored as correctness:judge, scored_by judge:<model>. 503 when the service has no judge (CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY, CAIRN_JUDGE_MODEL); 502 when the judge refuses or keeps failing. A malformed verdict, after the retries, is score null with the reason.",
      request: body(judgeScoreRequestSchema),
      responses: {
        200: json(judgeVerdictSchema, "the verdict"),
        ...errors("invalid_request", "not_found", "unsupported_media_type", "bad_gateway"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/testing/cases",
      summary: "Add test cases to a dataset (one, or many under cases)",
      description: "A case is keyed by (dataset, query): the same query again updates it.",
      request: body(createTestCasesRequestSchema),
      responses: {
        201: json(z.object({ cases: z.array(testCaseSchema) }), "the cases as stored"),
        ...errors("invalid_request", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/testing/cases",
      summary: "The cases of a dataset, or of all",
      request: { query: casesQuerySchema },
      responses: {
        200: json(z.object({ cases: z.array(testCaseSchema) }), "cases"),
        ...errors("invalid_request"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/testing/datasets",
      summary: "The datasets, with their number of cases",
      responses: {
        200: json(z.object({ datasets: z.array(datasetSchema) }), "datasets"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/testing/runs",
      summary:
        "Record a finished test run, or start one; the service computes passes and the summary",
      description:
        "The scores of each case are keyed by the scorer name the run asked for: correctness for a grade by rules, correctness:judge for a grade by the LLM judge (runTests() and cairn test call the judge only for names ending in :judge). With status: running (and total_cases), the run is given its results as its cases finish (POST /testing/runs/{run_id}/results), and its progress is seen meanwhile (GET /events, GET /testing/runs).",
      request: body(createTestRunRequestSchema),
      responses: {
        201: json(testRunDetailSchema, "the run"),
        ...errors("invalid_request", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/testing/runs",
      summary: "The latest runs, newest first, without their results, a page at a time",
      request: { query: runsQuerySchema },
      responses: {
        200: json(
          z.object({
            runs: z.array(testRunSchema),
            next_cursor: z
              .string()
              .nullable()
              .describe("pass as `cursor` for the next page; null on the last"),
          }),
          "a page of runs",
        ),
        ...errors("invalid_request"),
        ...common,
      },
    },
    {
      method: "post",
      path: "/testing/runs/{run_id}/results",
      summary: "Add results to a running test run as its cases finish, and finish it",
      description:
        "offset is how many results were sent before these: results the run has already (a request sent again after a lost answer) are skipped, and an offset past them is a 409 that says where to start. finished: true ends the run (the request may come again; anything else after it is a 409). At most 10,000 results and 32 MiB of them per run.",
      request: { params: z.object({ run_id: runId }), ...body(addTestResultsRequestSchema) },
      responses: {
        200: json(testRunSchema, "the run, without its results"),
        ...errors(
          "invalid_request",
          "not_found",
          "conflict",
          "payload_too_large",
          "unsupported_media_type",
        ),
        ...common,
      },
    },
    {
      method: "get",
      path: "/testing/runs/{run_id}",
      summary: "A run with its results, case by case",
      request: { params: z.object({ run_id: runId }) },
      responses: {
        200: json(testRunDetailSchema, "the run"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/testing/runs/{base_run_id}/compare/{run_id}",
      summary: "Regressions and improvements from a base run to another",
      request: { params: z.object({ base_run_id: runId, run_id: runId }) },
      responses: {
        200: json(testRunComparisonSchema, "the comparison"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
  ];
}
