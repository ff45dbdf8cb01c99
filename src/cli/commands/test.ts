import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { ConfigurationError } from "../../core/errors/index.js";
import type { TestResult } from "../../core/wire/evals.js";
import type { TestCaseInput } from "../../tracing/client/evals.js";
import { formatTestReport } from "../../tracing/evals/format-report.js";
import { type RunTestsOptions, runTests, type TestScorer } from "../../tracing/evals/run-tests.js";
import { configure, shutdown } from "../../tracing/runtime/configure.js";
import { serviceAddress } from "./service-address.js";

export const testHelp = `Usage:
  cairn test <file> [--min-score 0.8] [--min-pass-rate 0.9] [--concurrency 4]
                    [--threshold 0.5] [--name <run name>] [--version <app version>] [--no-upload]

Runs the test file's cases through its task, scores them, prints the report, and records the
run on the Cairn service. The file (.ts, .mts, .js or .mjs) exports:
  dataset    a dataset name stored on the service, or an array of cases
             ({ query | input, expected_answer | expected_output })
  task       (query, testCase) => output, sync or async: your app
  scorers    optional: slugs or { name, scorer }, default ["correctness"]
Exit code 1 when a scorer's mean is under --min-score or the pass rate under --min-pass-rate,
2 when the file or the options are wrong. Options --endpoint, --api-key, --data-dir as for
\`cairn traces\`; without a reachable service the run is scored but not recorded.
`;

interface TestFile {
  readonly dataset?: string | readonly TestCaseInput[];
  readonly task?: RunTestsOptions["task"];
  readonly scorers?: readonly TestScorer[];
}

/** A span exporter that drops spans: costs are still added up when no service is reachable. */
const discard: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

function fraction(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !(number >= 0 && number <= 1)) {
    throw new UsageError(`--${option} must be a number from 0 to 1 (got "${value}")`);
  }
  return number;
}

class UsageError extends Error {}

/** `cairn test <file>`: a test run from the terminal, fit for a CI pipeline. */
export async function test(
  args: readonly string[],
  write: (text: string) => void,
  progress: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  let options: ReturnType<typeof readOptions>;
  try {
    options = readOptions(args);
  } catch (error) {
    process.stderr.write(`cairn test: ${(error as Error).message}\n\n${testHelp}`);
    return 2;
  }
  if (options === "help") {
    write(testHelp);
    return 0;
  }
  const file = await loadTestFile(options.file);
  if (typeof file === "string") {
    process.stderr.write(`cairn test: ${file}\n`);
    return 2;
  }
  const service = await serviceAddress(options.connection);
  if (service.reachable) {
    configure({
      endpoint: service.endpoint,
      ...(service.apiKey === undefined ? {} : { apiKey: service.apiKey }),
      serviceName: "cairn-test",
    });
  } else {
    progress.write(
      `cairn test: the Cairn service at ${service.endpoint} is not reachable; the run is scored but not recorded\n`,
    );
    configure({ exporter: discard, serviceName: "cairn-test" });
  }
  const bar = progressBar(progress);
  try {
    const report = await runTests({
      ...(typeof file.dataset === "string" ? { dataset: file.dataset } : { cases: file.dataset }),
      task: file.task,
      ...(file.scorers === undefined ? {} : { scorers: file.scorers }),
      concurrency: options.concurrency,
      passThreshold: options.threshold,
      upload: service.reachable && options.upload,
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.version === undefined ? {} : { version: options.version }),
      onProgress: bar.update,
    });
    bar.done();
    write(`${formatTestReport(report)}\n`);
    if (report.uploadError !== undefined) {
      process.stderr.write(`cairn test: the run was not recorded: ${report.uploadError}\n`);
    }
    const missed = thresholdsMissed(report.summary, options.minScore, options.minPassRate);
    for (const line of missed) write(`FAILED: ${line}\n`);
    return missed.length > 0 || report.uploadError !== undefined ? 1 : 0;
  } catch (error) {
    // A wrong scorer in the file, a dataset with no cases: the file, not the app under test.
    if (ConfigurationError.isInstance(error)) {
      bar.done();
      process.stderr.write(`cairn test: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    bar.done();
    await shutdown();
  }
}

function readOptions(args: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      "min-score": { type: "string" },
      "min-pass-rate": { type: "string" },
      threshold: { type: "string" },
      concurrency: { type: "string" },
      name: { type: "string" },
      version: { type: "string" },
      "no-upload": { type: "boolean" },
      endpoint: { type: "string" },
      "api-key": { type: "string" },
      "data-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return "help" as const;
  const [file, ...extra] = positionals;
  if (file === undefined)
    throw new UsageError("name the test file, e.g. cairn test evals/refunds.ts");
  if (extra.length > 0)
    throw new UsageError(`one test file at a time (got ${positionals.join(", ")})`);
  const concurrency = values.concurrency === undefined ? 4 : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to 64 (got "${values.concurrency}")`,
    );
  }
  return {
    file,
    minScore: fraction(values["min-score"], "min-score"),
    minPassRate: fraction(values["min-pass-rate"], "min-pass-rate"),
    threshold: fraction(values.threshold, "threshold") ?? 0.5,
    concurrency,
    name: values.name,
    version: values.version,
    upload: values["no-upload"] !== true,
    connection: {
      endpoint: values.endpoint,
      apiKey: values["api-key"],
      dataDir: values["data-dir"],
    },
  };
}

/** The test file's exports, or a message that says what is wrong with it. */
async function loadTestFile(
  path: string,
): Promise<(TestFile & Required<Pick<TestFile, "dataset" | "task">>) | string> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (
      code === "ERR_MODULE_NOT_FOUND" &&
      String((error as Error).message).includes(resolve(path))
    ) {
      return `no test file at ${path}`;
    }
    if (code === "ERR_UNKNOWN_FILE_EXTENSION") {
      return `cannot load ${path}: TypeScript test files need Node 22.18 or newer (or run cairn under tsx)`;
    }
    return `cannot load ${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
  // Named exports, or one default export holding them.
  const exports = (
    typeof module.default === "object" && module.default !== null && module.task === undefined
      ? module.default
      : module
  ) as TestFile;
  if (typeof exports.task !== "function") {
    return `${path} must export a task: export function task(query) { return yourApp(query); }`;
  }
  const dataset = exports.dataset;
  if (typeof dataset !== "string" && !Array.isArray(dataset)) {
    return `${path} must export a dataset: a dataset name stored on the service, or an array of cases ({ query, expected_answer })`;
  }
  return { ...exports, task: exports.task, dataset };
}

function thresholdsMissed(
  summary: { mean_scores: Record<string, number | null>; pass_rate: number },
  minScore: number | undefined,
  minPassRate: number | undefined,
): string[] {
  const missed: string[] = [];
  if (minScore !== undefined) {
    for (const [slug, mean] of Object.entries(summary.mean_scores)) {
      if (mean === null || mean < minScore) {
        missed.push(
          `mean ${slug} ${mean === null ? "undecided" : mean.toFixed(3)} is under --min-score ${minScore}`,
        );
      }
    }
  }
  if (minPassRate !== undefined && summary.pass_rate < minPassRate) {
    missed.push(
      `pass rate ${summary.pass_rate.toFixed(3)} is under --min-pass-rate ${minPassRate}`,
    );
  }
  return missed;
}

/** A bar redrawn in place on a terminal; a line per tenth of the run otherwise (CI logs). */
function progressBar(stream: NodeJS.WriteStream) {
  const width = 30;
  let lastTenth = -1;
  let drawn = false;
  let failed = 0;
  return {
    update: (done: number, total: number, result: TestResult) => {
      if (!result.passed) failed++;
      const status = `${done}/${total} cases${failed > 0 ? `, ${failed} not passing` : ""}`;
      if (stream.isTTY) {
        const filled = Math.round((done / total) * width);
        stream.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${status}\u001b[K`);
        drawn = true;
        return;
      }
      const tenth = Math.floor((done / total) * 10);
      if (tenth !== lastTenth || done === total) {
        lastTenth = tenth;
        stream.write(`${status}\n`);
      }
    },
    done: () => {
      if (drawn) stream.write("\n");
      drawn = false;
    },
  };
}
