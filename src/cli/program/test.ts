import type { CairnCommand } from "./cairn-command.js";
import { type ConnectionOptions, withConnectionOptions } from "./connection.js";
import { fraction, wholeNumberFrom } from "./values.js";

/** The options of `cairn test`. */
export interface TestOptions extends ConnectionOptions {
  readonly minScore?: number;
  readonly minPassRate?: number;
  readonly threshold: number;
  readonly concurrency: number;
  readonly name?: string;
  readonly version?: string;
  /** False with --no-upload. */
  readonly upload: boolean;
}

/** Declares `cairn test <file>`. */
export function addTestCommand(program: CairnCommand): void {
  withConnectionOptions(
    program
      .command("test")
      .summary("run a test file's cases, score them, print the report")
      .description(
        "Runs the test file's cases through its task, scores them, prints the report, and records the run on the Cairn service (without a reachable service the run is scored but not recorded).",
      )
      .argument("<file>", "the test file, e.g. evals/refunds.ts")
      .option(
        "--min-score <0..1>",
        "fail (exit code 1) when a scorer's mean score is under this",
        fraction,
      )
      .option(
        "--min-pass-rate <0..1>",
        "fail (exit code 1) when the share of passing cases is under this",
        fraction,
      )
      .option("--threshold <0..1>", "the score a case needs on every scorer to pass", fraction, 0.5)
      .option("--concurrency <count>", "cases run at once, 1 to 64", wholeNumberFrom(1, 64), 4)
      .option("--name <name>", "the run's name")
      .option("--version <version>", "the version of your app that ran")
      .option("--no-upload", "score without recording the run on the service"),
  )
    .addHelpText(
      "after",
      `
The file (.ts, .mts, .js or .mjs) exports:
  dataset   a dataset name stored on the service, or an array of cases
            ({ query | input, expected_answer | expected_output })
  task      (query, testCase) => output, sync or async: your app
  scorers   optional: slugs or { name, scorer }, default ["correctness"];
            a slug grades by rules, and by the LLM judge with ":judge"
            ("correctness:judge"; the judge from CAIRN_JUDGE_*)

Exit code 1 when a threshold is missed or the run could not be recorded, 2 when
the file or the options are wrong.`,
    )
    .runs(async (file: string, options: TestOptions) =>
      (await import("../commands/test.js")).test(file, options),
    );
}
