import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { ConfigurationError } from "../../core/errors/index.js";
import { casePassed, summarizeResults } from "../../core/eval-runs.js";
import { randomHex } from "../../core/ids.js";
import type { CaseScore, TestResult, TestRunSummary } from "../../core/wire/evals.js";
import { attributes as names } from "../attributes.js";
import { listTestCases, type TestCaseInput, toApiCase } from "../client/evals.js";
import { currentSpan } from "../current-span.js";
import { observe } from "../observe.js";
import { flush, serviceConnection } from "../runtime/configure.js";
import { watchTrace } from "../runtime/trace-watch.js";
import { judgeAskedFor } from "../scoring/configured-judge.js";
import { clipDocuments, recordedDocuments, recordedText } from "../scoring/recorded-text.js";
import { findScorer } from "../scoring/registry.js";
import { runScorer } from "../scoring/run-scorer.js";
import { lookUpScorer, readScorerName } from "../scoring/scorer-name.js";
import type { JudgeGrader, Scorer } from "../scoring/types.js";
import { RunRecorder } from "./run-recorder.js";

/** One case as the task sees it. */
export interface TestCaseRun {
  readonly caseId: string | null;
  readonly query: string;
  readonly expected: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/**
 * A scorer by slug (built-in or registered), or your own function under a name. A slug or name
 * ending in `:judge` (`correctness:judge`) has the LLM judge grade; any other never calls it.
 */
export type TestScorer = string | { readonly name: string; readonly scorer: Scorer };

export interface RunTestsOptions {
  /** A dataset stored on the service (`createTestCases`), read at the start of the run. */
  dataset?: string;
  /** Cases given here, instead of a dataset: `query`/`expected_answer` or `input`/`expected_output`. */
  cases?: readonly TestCaseInput[];
  /** Your app: called with each case's query; what it returns (or resolves) is scored. */
  task: (query: string, testCase: TestCaseRun) => unknown;
  /**
   * Default: `["correctness"]`, graded by rules. Add `:judge` to a slug to have the LLM judge
   * grade (`"correctness:judge"`); the run then needs `configure({ judge })` or CAIRN_JUDGE_*.
   */
  scorers?: readonly TestScorer[];
  /** Cases run at the same time. Default 4. */
  concurrency?: number;
  /** The version of the app under test, recorded on the run and its traces. */
  version?: string;
  /** A name for the run. Default: the dataset and the time. */
  name?: string;
  /** A case passes when every score is at least this. Default 0.5. */
  passThreshold?: number;
  /**
   * Records the run on the service (`POST /testing/runs`), as its cases finish, so that its
   * progress shows there meanwhile. Default: when a service is configured. `true` without one
   * is an error.
   */
  upload?: boolean;
  /**
   * How long one case's task may take, in milliseconds; past it the case is an error and the
   * run goes on (the task's promise is left to settle on its own). Default 300000.
   */
  timeoutMs?: number;
  /** Called as each case finishes, in the order they finish. */
  onProgress?: (done: number, total: number, result: TestResult) => void;
}

/** What `runTests()` returns. */
export interface TestReport {
  /** The run's id on the service; undefined when it was not recorded. */
  readonly runId: string | undefined;
  /** Why recording the run on the service failed, when it did: the report is whole anyway. */
  readonly uploadError: string | undefined;
  readonly name: string;
  readonly dataset: string | null;
  readonly version: string | null;
  readonly passThreshold: number;
  readonly summary: TestRunSummary;
  readonly results: readonly TestResult[];
  /** Up to 5 cases that did worst (errors first, then the lowest mean score); perfect ones left out. */
  readonly worst: readonly TestResult[];
}

interface ResolvedCase extends TestCaseRun {}

/**
 * Runs every case through `task` inside `observe()` (one trace per case), scores the output,
 * and records the run on the service: a report with the pass rate, the mean score per scorer,
 * latency percentiles, the total cost (the cost of every span of the cases' traces) and the
 * worst cases.
 *
 * @example
 * const report = await runTests({
 *   dataset: "refunds",
 *   task: (question) => answer(question),
 *   scorers: ["correctness", "faithfulness"],
 *   version: "1.4.0",
 * });
 * console.log(formatTestReport(report));
 */
export async function runTests(options: RunTestsOptions): Promise<TestReport> {
  const settings = checkOptions(options);
  const cases = await resolveCases(options);
  const name = options.name ?? `${options.dataset ?? "cases"} ${new Date().toISOString()}`;
  // The run is recorded as its cases finish, so that its progress shows on the service.
  const recorder = settings.upload
    ? new RunRecorder(
        {
          name,
          dataset: options.dataset ?? null,
          version: options.version ?? null,
          pass_threshold: settings.passThreshold,
        },
        cases.length,
      )
    : undefined;
  const results: TestResult[] = new Array(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      const testCase = cases[index] as ResolvedCase;
      const result = await runCase(testCase, options, settings);
      results[index] = result;
      recorder?.done(index, result);
      done++;
      options.onProgress?.(done, cases.length, result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, cases.length) }, worker));
  // The cases' traces go out now, so the run's trace ids can be opened on the service.
  await flush().catch(() => undefined);

  const summary = summarizeResults(results);
  // Every case has run and been paid for: a failed upload must not lose the report.
  const { runId, uploadError } = (await recorder?.finish()) ?? {
    runId: undefined,
    uploadError: undefined,
  };
  return {
    runId,
    uploadError,
    name,
    dataset: options.dataset ?? null,
    version: options.version ?? null,
    passThreshold: settings.passThreshold,
    summary,
    results,
    worst: worstCases(results),
  };
}

interface Settings {
  readonly scorers: ReadonlyArray<{
    readonly name: string;
    readonly scorer: Scorer;
    /** The judge, for a scorer asked for with `:judge`; undefined for the others. */
    readonly judge: JudgeGrader | undefined;
  }>;
  readonly concurrency: number;
  readonly passThreshold: number;
  readonly upload: boolean;
  readonly timeoutMs: number;
}

/** The service's limits on what a run records (core/wire/evals.ts): longer text is cut. */
const limits = { output: 1_000_000, error: 100_000, reason: 10_000, label: 200 } as const;
const scorerNamePattern = /^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,69}$/;
/** How long a scorer may take per case, the judge's retries included. */
const scorerTimeoutMs = 300_000;

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

function checkOptions(options: RunTestsOptions): Settings {
  const fail = (message: string): never => {
    throw new ConfigurationError(`runTests(): ${message}`);
  };
  if (typeof options?.task !== "function") fail("task must be a function of the case's query");
  if ((options.dataset === undefined) === (options.cases === undefined)) {
    fail("give a dataset (stored on the service) or cases, one of them");
  }
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    fail(`concurrency must be a whole number from 1 to 64 (got ${String(concurrency)})`);
  }
  const passThreshold = options.passThreshold ?? 0.5;
  if (typeof passThreshold !== "number" || !(passThreshold >= 0 && passThreshold <= 1)) {
    fail(`passThreshold must be a number from 0 to 1 (got ${String(passThreshold)})`);
  }
  const named = (options.scorers ?? ["correctness"]).map((each) => {
    if (typeof each === "string") {
      const found = lookUpScorer(each, findScorer);
      if (!found.found) {
        return fail(
          found.problem === "unknown"
            ? `no scorer "${found.slug}"; use a built-in (correctness, faithfulness, toxicity, helpfulness; add :judge to have the LLM judge grade), registerScorer() yours, or pass { name, scorer }`
            : found.message,
        );
      }
      return { name: each, scorer: found.scorer, asksJudge: found.choice.judge };
    }
    if (typeof each?.name !== "string" || typeof each.scorer !== "function") {
      fail("a scorer is a slug or { name, scorer: (input, context) => { score, reason } }");
    }
    if (!scorerNamePattern.test(each.name)) {
      fail(`the scorer name "${each.name}" must be 1 to 70 letters, digits, spaces and _ . : -`);
    }
    return { name: each.name, scorer: each.scorer, asksJudge: readScorerName(each.name).judge };
  });
  const names = named.map((each) => each.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) fail(`the scorer "${repeated}" is given twice`);
  const timeoutMs = options.timeoutMs ?? 300_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    fail(`timeoutMs must be a whole number of milliseconds (got ${String(timeoutMs)})`);
  }
  if (named.length === 0) fail("give at least one scorer");
  const hasService = serviceConnection() !== undefined;
  if (options.upload === true && !hasService) {
    fail(
      "upload: true needs the Cairn service: configure({ endpoint, apiKey }) or set CAIRN_ENDPOINT",
    );
  }
  // Before any case runs: a run that asks for the judge without one would only fail later.
  const judge = judgeAskedFor(
    named.filter((each) => each.asksJudge).map((each) => each.name),
    "runTests()",
  );
  const scorers = named.map(({ name, scorer, asksJudge }) => ({
    name,
    scorer,
    judge: asksJudge ? judge : undefined,
  }));
  return { scorers, concurrency, passThreshold, upload: options.upload ?? hasService, timeoutMs };
}

async function resolveCases(options: RunTestsOptions): Promise<ResolvedCase[]> {
  if (options.cases !== undefined) {
    if (options.cases.length === 0) throw new ConfigurationError("runTests(): cases is empty");
    return options.cases.map((each, index) => {
      const apiCase = toApiCase(each, index, "runTests()");
      return {
        caseId: null,
        query: apiCase.query,
        expected: apiCase.expected_answer,
        metadata: apiCase.metadata ?? {},
      };
    });
  }
  const stored = await listTestCases(options.dataset);
  if (stored.length === 0) {
    throw new ConfigurationError(
      `runTests(): the dataset "${options.dataset}" has no cases; add some with createTestCases()`,
    );
  }
  return stored.map((each) => ({
    caseId: each.case_id,
    query: each.query,
    expected: each.expected_answer,
    metadata: each.metadata,
  }));
}

/** What the spans of a case's trace add up to. */
interface TraceFacts {
  costUsd: number | null;
  documents: string[];
}

function collect(facts: TraceFacts, span: ReadableSpan): void {
  const cost = span.attributes[names.costUsd];
  if (typeof cost === "number") facts.costUsd = (facts.costUsd ?? 0) + cost;
  if (span.attributes[names.openInferenceKind] === "RETRIEVER") {
    const output = span.attributes[names.outputValue];
    if (typeof output === "string") facts.documents.push(...recordedDocuments(output));
  }
}

async function runCase(
  testCase: ResolvedCase,
  options: RunTestsOptions,
  settings: Settings,
): Promise<TestResult> {
  const facts: TraceFacts = { costUsd: null, documents: [] };
  let stopWatching: (() => void) | undefined;
  let traceId: string | null = null;
  const observed = observe(
    async (query: string) => {
      const span = currentSpan();
      if (span.isRecording) {
        traceId = span.traceId;
        stopWatching = watchTrace(span.traceId.slice(3), (ended) => collect(facts, ended));
      }
      return options.task(query, testCase);
    },
    {
      // A trace of its own, even when runTests() runs inside an observed call.
      traceId: `tr_${randomHex(16)}`,
      kind: "chain",
      spanName: "test case",
      tags: ["cairn.test"],
      ...(testCase.expected === null ? {} : { expectedOutput: testCase.expected }),
      ...(options.version === undefined ? {} : { version: options.version }),
      metadata: { case_id: testCase.caseId, dataset: options.dataset ?? null },
    },
  );
  const started = performance.now();
  let output: string | null = null;
  let error: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the task did not finish within ${settings.timeoutMs} ms`)),
        settings.timeoutMs,
      );
    });
    const value = await Promise.race([observed(testCase.query), timedOut]);
    output = clip(textOfOutput(value), limits.output);
  } catch (caught) {
    error = clip(
      caught instanceof Error ? `${caught.name}: ${caught.message}` : String(caught),
      limits.error,
    );
  } finally {
    clearTimeout(timer);
    stopWatching?.();
  }
  const latencyMs = performance.now() - started;
  const scores: Record<string, CaseScore> = {};
  const documents = clipDocuments(facts.documents);
  for (const { name, scorer, judge } of settings.scorers) {
    const verdict =
      output === null
        ? { score: null, reason: "not scored: the task failed" }
        : await runScorer(
            name,
            scorer,
            {
              input: testCase.query,
              output,
              expected: testCase.expected ?? undefined,
              context: documents.length === 0 ? undefined : documents,
            },
            { judge },
            { timeoutMs: scorerTimeoutMs },
          );
    scores[name] = {
      score: verdict.score,
      ...("label" in verdict && verdict.label !== undefined
        ? { label: clip(verdict.label, limits.label) }
        : {}),
      reason: clip(verdict.reason, limits.reason),
    };
  }
  const result = {
    case_id: testCase.caseId,
    query: testCase.query,
    expected_answer: testCase.expected,
    output,
    error,
    scores,
    latency_ms: Math.round(latencyMs * 1000) / 1000,
    cost_usd: facts.costUsd,
    trace_id: traceId,
  };
  return { ...result, passed: casePassed(result, settings.passThreshold) };
}

/** What the task returned, as the text scorers read: a string as is, else its text inside. */
function textOfOutput(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return json === undefined ? String(value) : (recordedText(json) ?? json);
}

function meanScore(result: TestResult): number {
  const values = Object.values(result.scores)
    .map((each) => each.score)
    .filter((score): score is number => score !== null);
  return values.length === 0 ? -1 : values.reduce((sum, each) => sum + each, 0) / values.length;
}

function worstCases(results: readonly TestResult[]): TestResult[] {
  return (
    [...results]
      // A passing case with every score at 1 has nothing to show.
      .filter((result) => !result.passed || meanScore(result) < 1)
      .sort(
        (a, b) => (a.error !== null ? -2 : meanScore(a)) - (b.error !== null ? -2 : meanScore(b)),
      )
      .slice(0, 5)
  );
}
