import { Hono } from "hono";
import { z } from "zod";
import { compareRuns } from "../../core/eval-runs.js";
import {
  addTestResultsRequestSchema,
  createTestCaseRequestSchema,
  createTestCasesBatchSchema,
  createTestRunRequestSchema,
  type TestRun,
} from "../../core/wire/evals.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import { maxRunResults, type ResultsRefusal, type RunCursor } from "../store/evals.js";
import type { EvalRepository } from "../store/store.js";
import { decodeCursor, encodeCursor } from "./query-params.js";

const defaultDataset = "default";
const runIdPattern = /^run_[0-9a-f]{24}$/;

export const casesQuerySchema = z.strictObject({ dataset: z.string().min(1).optional() });
export const runsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).optional().describe("the next_cursor of the previous page"),
});

const runCursorSchema: z.ZodType<RunCursor> = z.strictObject({
  createdAt: z.string(),
  row: z.number().int(),
});

function checkRunId(runId: string): string {
  if (!runIdPattern.test(runId)) {
    throw new ApiError(
      "invalid_request",
      `"${runId}" is not a test run id; use the run_… id that POST /testing/runs returned`,
    );
  }
  return runId;
}

/** Why results were not added to a run, as the API says it. */
function refusal(runId: string, outcome: ResultsRefusal): ApiError {
  switch (outcome.refused) {
    case "not_found":
      return new ApiError("not_found", `no test run ${runId}`);
    case "finished":
      return new ApiError("conflict", `test run ${runId} is finished: it takes no more results`);
    case "gap":
      return new ApiError(
        "conflict",
        `test run ${runId} has ${outcome.stored} results; send from offset ${outcome.stored}`,
      );
    case "too_many":
      return new ApiError("invalid_request", `a test run has at most ${maxRunResults} results`);
    case "too_large":
      return new ApiError("payload_too_large", `test run ${runId}'s results are over 32 MiB`);
    case "empty":
      return new ApiError(
        "invalid_request",
        "a finished run needs at least one result: send the results with finished: true",
      );
  }
}

/**
 * Test cases in named datasets, test runs (given whole, or as their cases finish), and the
 * comparison of two runs. `onRunChanged` is told of each run recorded or given results (the
 * project's live events).
 */
export function evalRoutes(
  evals: EvalRepository,
  onRunChanged: (projectId: string, run: TestRun) => void = () => undefined,
) {
  const findRun = async (projectId: string, runId: string) => {
    const run = await evals.run(projectId, checkRunId(runId));
    if (run === undefined) throw new ApiError("not_found", `no test run ${runId}`);
    return run;
  };

  return new Hono<{ Variables: AuthVariables }>()
    .post("/testing/cases", async (c) => {
      const body = await readJson(c.req.raw);
      // One case, or many under `cases`: checked against the form the body chose.
      const batch = typeof body === "object" && body !== null && "cases" in body;
      const parsed = (batch ? createTestCasesBatchSchema : createTestCaseRequestSchema).safeParse(
        body,
      );
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      const request = parsed.data;
      const cases = "cases" in request ? request.cases : [request];
      const stored = await evals.upsertCases(
        c.get("project").id,
        request.dataset ?? defaultDataset,
        cases,
      );
      return c.json({ cases: stored }, 201);
    })
    .get("/testing/cases", async (c) => {
      const parsed = casesQuerySchema.safeParse(c.req.query());
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      return c.json({ cases: await evals.cases(c.get("project").id, parsed.data.dataset) });
    })
    .get("/testing/datasets", async (c) =>
      c.json({ datasets: await evals.datasets(c.get("project").id) }),
    )
    .post("/testing/runs", async (c) => {
      const parsed = createTestRunRequestSchema.safeParse(await readJson(c.req.raw));
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      const projectId = c.get("project").id;
      const detail = await evals.addRun(projectId, parsed.data);
      // The run as the run list has it: its results stay out of the event.
      const { results: _results, ...run } = detail;
      onRunChanged(projectId, run);
      return c.json(detail, 201);
    })
    .get("/testing/runs", async (c) => {
      const parsed = runsQuerySchema.safeParse(c.req.query());
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      const { limit, cursor } = parsed.data;
      const page = await evals.runPage(c.get("project").id, {
        limit,
        cursor: cursor === undefined ? undefined : decodeCursor(cursor, runCursorSchema),
      });
      return c.json({
        runs: page.runs,
        next_cursor: page.next === null ? null : encodeCursor(page.next),
      });
    })
    .post("/testing/runs/:runId/results", async (c) => {
      const runId = checkRunId(c.req.param("runId"));
      const parsed = addTestResultsRequestSchema.safeParse(await readJson(c.req.raw));
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      const projectId = c.get("project").id;
      const outcome = await evals.addResults(projectId, runId, parsed.data);
      if ("refused" in outcome) throw refusal(runId, outcome);
      onRunChanged(projectId, outcome);
      return c.json(outcome);
    })
    .get("/testing/runs/:runId", async (c) =>
      c.json(await findRun(c.get("project").id, c.req.param("runId"))),
    )
    .get("/testing/runs/:baseId/compare/:runId", async (c) => {
      const projectId = c.get("project").id;
      const base = await findRun(projectId, c.req.param("baseId"));
      const run = await findRun(projectId, c.req.param("runId"));
      return c.json(compareRuns(base, run));
    });
}
