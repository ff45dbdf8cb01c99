import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import {
  ConfigurationError,
  configure,
  formatTestReport,
  type RunTestsOptions,
  runTests,
  shutdown,
  type TestCaseInput,
  type TestResult,
  type TestScorer,
} from "../../index.js";
import { UsageError } from "../program/cairn-command.js";
import type { TestOptions } from "../program/test.js";
import { serviceAddress } from "./service-address.js";

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

/** `cairn test <file>`: a test run from the terminal, fit for a CI pipeline. */
export async function test(
  path: string,
  options: TestOptions,
  write: (text: string) => void = (text) => process.stdout.write(text),
  progress: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const file = await loadTestFile(path);
  const service = await serviceAddress(options);
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
      throw new UsageError(error.message, { showHelp: false });
    }
    throw error;
  } finally {
    bar.done();
    await shutdown();
  }
}

/** The test file's exports; a UsageError says what is wrong with it. */
async function loadTestFile(
  path: string,
): Promise<TestFile & Required<Pick<TestFile, "dataset" | "task">>> {
  const wrong = (message: string) => new UsageError(message, { showHelp: false });
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (
      code === "ERR_MODULE_NOT_FOUND" &&
      String((error as Error).message).includes(resolve(path))
    ) {
      throw wrong(`no test file at ${path}`);
    }
    if (code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw wrong(
        `cannot load ${path}: TypeScript test files need Node 22.18 or newer (or run cairn under tsx)`,
      );
    }
    throw wrong(`cannot load ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Named exports, or one default export holding them.
  const exports = (
    typeof module.default === "object" && module.default !== null && module.task === undefined
      ? module.default
      : module
  ) as TestFile;
  if (typeof exports.task !== "function") {
    throw wrong(
      `${path} must export a task: export function task(query) { return yourApp(query); }`,
    );
  }
  const dataset = exports.dataset;
  if (typeof dataset !== "string" && !Array.isArray(dataset)) {
    throw wrong(
      `${path} must export a dataset: a dataset name stored on the service, or an array of cases ({ query, expected_answer })`,
    );
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
