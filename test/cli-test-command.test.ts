import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "./helpers/run-command.js";
import { startTestServer, type TestServer } from "./server/helpers.js";

const cli = fileURLToPath(new URL("../src/cli/index.ts", import.meta.url));
const evals = fileURLToPath(new URL("./fixtures/evals/support-evals.ts", import.meta.url));
const noTask = fileURLToPath(new URL("./fixtures/evals/no-task.ts", import.meta.url));
const unknownScorer = fileURLToPath(new URL("./fixtures/evals/unknown-scorer.ts", import.meta.url));
const judgeNotConfigured = fileURLToPath(
  new URL("./fixtures/evals/judge-not-configured.ts", import.meta.url),
);

/** Runs a command with no service or judge named in its environment. */
function run(command: string, args: readonly string[]) {
  return runCommand(command, args, {
    CAIRN_ENDPOINT: "",
    CAIRN_API_KEY: "",
    CAIRN_JUDGE_BASE_URL: "",
    CAIRN_JUDGE_API_KEY: "",
    CAIRN_JUDGE_MODEL: "",
  });
}

/** `cairn test …` as a user runs it. */
function cairnTest(args: readonly string[]) {
  return run(process.execPath, ["--import", "tsx", cli, "test", ...args]);
}

describe("cairn test <file>", () => {
  let t: TestServer;
  let service: string[];

  beforeAll(async () => {
    t = await startTestServer();
    service = ["--endpoint", t.server.url, "--api-key", t.apiKey];
  });
  afterAll(async () => {
    await t.stop();
  });

  it("runs the file's cases, prints the report, records the run, and exits 0 over --min-score", async () => {
    const result = await cairnTest([evals, "--min-score", "0.6", "--name", "nightly", ...service]);
    expect(result.stderr).toContain("3/3 cases, 1 not passing");
    expect(result.stdout).toContain('test run "nightly"');
    expect(result.stdout).toMatch(/pass rate\s+66\.7% \(2 of 3, threshold 0\.5\)/);
    expect(result.stdout).toMatch(/mean correctness\s+0\.67/);
    expect(result.stdout).toContain("What is the capital of France?");
    expect(result.code).toBe(0);

    const runs = await (await t.call("GET", "/testing/runs")).json();
    expect(runs.runs[0]).toMatchObject({ name: "nightly", summary: { cases: 3, passed: 2 } });
    expect(result.stdout).toContain(runs.runs[0].run_id);
  });

  it("exits 1 and says which threshold was missed", async () => {
    const result = await cairnTest([
      evals,
      "--min-score",
      "0.9",
      "--min-pass-rate",
      "0.9",
      ...service,
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAILED: mean correctness 0.667 is under --min-score 0.9");
    expect(result.stdout).toContain("FAILED: pass rate 0.667 is under --min-pass-rate 0.9");
  });

  it("draws a progress bar on a terminal", async () => {
    // `script` gives the command a real terminal (a pty), as in an interactive shell.
    const command = [process.execPath, "--import", "tsx", cli, "test", evals, ...service]
      .map((part) => `'${part}'`)
      .join(" ");
    const result = await run("script", ["-qec", command, "/dev/null"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\r\[#{30}\] 3\/3 cases/);
  });

  it("scores without recording when no service answers, and says so", async () => {
    const result = await cairnTest([evals, "--endpoint", "http://127.0.0.1:9"]);
    expect(result.stderr).toContain("not reachable; the run is scored but not recorded");
    expect(result.stdout).toContain("(not recorded)");
    expect(result.code).toBe(0);
  });

  it.each([
    [["test/fixtures/evals/missing.ts"], /no test file at test\/fixtures\/evals\/missing\.ts/],
    [[noTask], /must export a task/],
    [
      [evals, "--min-score", "2"],
      /option '--min-score <0\.\.1>' argument '2' is invalid\. It must be a number from 0 to 1/,
    ],
    [[], /missing required argument 'file'/],
    [[unknownScorer], /no scorer "corectness"/],
    [
      [judgeNotConfigured],
      /"correctness:judge" asks for the LLM judge, and none is configured: .*CAIRN_JUDGE_BASE_URL/,
    ],
  ])("exits 2 with a clear message for %j", async (args, message) => {
    const result = await cairnTest(args as string[]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
