import {
  ConfigurationError,
  configure,
  registerScorer,
  runTests,
  type Scorer,
  score,
  shutdown,
  unregisterScorer,
} from "cairn-ai";
import { memoryExporter } from "cairn-ai/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";

const verdict = { score: 0.5, label: "partial", reason: "It gives the delay but not the unit." };
const cases = [
  { input: "How long does a refund take?", expected_output: "5 business days" },
  { input: "Which carrier do you ship with?", expected_output: "DHL" },
];
const answers: Record<string, string> = {
  "How long does a refund take?": "Refunds take 5 business days.",
  "Which carrier do you ship with?": "We ship with DHL.",
};
const task = (query: string) => answers[query] ?? "I do not know";

// A configured judge must cost nothing until a scorer asks for it by name: the fake counts.
describe("the LLM judge grades only when asked for with :judge", () => {
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI([
      { json: verdict },
      { json: verdict },
      { json: { score: 1, label: "clean", reason: "Polite and neutral." } },
    ]);
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await shutdown();
    // shutdown() keeps the judge of configure(): the next test starts without one.
    configure({ exporter: memoryExporter() });
  });
  afterAll(async () => {
    await fake.close();
  });

  const judge = () => ({ baseURL: fake.baseURL, apiKey: "sk-test", model: "gpt-4o-mini" });
  const withJudge = (maxRetries = 0) =>
    configure({ exporter: memoryExporter(), judge: { ...judge(), maxRetries } });

  it("grades plain slugs by rules, with a judge configured, and never calls it", async () => {
    withJudge();
    const report = await runTests({
      cases,
      task,
      scorers: ["correctness", "faithfulness", "toxicity"],
      upload: false,
    });
    expect(report.results[0]?.scores.correctness).toMatchObject({ score: 0.8, label: "contains" });
    expect(report.results[1]?.scores.toxicity).toMatchObject({ score: 1, label: "clean" });
    expect(await score("toxicity", { output: "Have a nice day." })).toMatchObject({
      label: "clean",
    });
    expect(fake.requests).toHaveLength(0);
  });

  it("does not call a judge set in CAIRN_JUDGE_* either (a CI machine's environment)", async () => {
    vi.stubEnv("CAIRN_JUDGE_BASE_URL", fake.baseURL);
    vi.stubEnv("CAIRN_JUDGE_API_KEY", "sk-test");
    vi.stubEnv("CAIRN_JUDGE_MODEL", "gpt-4o-mini");
    const report = await runTests({ cases, task, upload: false });
    expect(Object.keys(report.summary.mean_scores)).toEqual(["correctness"]);
    expect(
      await score("correctness", { output: "5 business days", expected: "5 business days" }),
    ).toMatchObject({ score: 1, label: "exact" });
    expect(fake.requests).toHaveLength(0);
  });

  it("asks the judge for a :judge slug, once per case, beside the rules", async () => {
    withJudge();
    const report = await runTests({
      cases,
      task,
      scorers: ["correctness", "correctness:judge"],
      concurrency: 1,
      upload: false,
    });
    expect(fake.requests).toHaveLength(2);
    for (const result of report.results) {
      expect(result.scores["correctness:judge"]).toEqual(verdict);
      expect(result.scores.correctness?.label).not.toBe("partial");
    }
    expect(JSON.stringify(fake.requests[0]?.body)).toContain("5 business days");

    await expect(score("toxicity:judge", { output: "Have a nice day." })).resolves.toMatchObject({
      score: 1,
      label: "clean",
      reason: "Polite and neutral.",
    });
    expect(fake.requests).toHaveLength(3);
  });

  it("gives your own scorers the judge only under a :judge name", async () => {
    const seen: boolean[] = [];
    const sees: Scorer = (_input, context) => {
      seen.push(context.judge !== undefined);
      return { score: 1, reason: "looked" };
    };
    registerScorer("sees-judge", sees);
    try {
      withJudge(3);
      await runTests({
        cases: cases.slice(0, 1),
        task,
        scorers: ["sees-judge", "sees-judge:judge", { name: "inline:judge", scorer: sees }],
        concurrency: 1,
        upload: false,
      });
      await score("sees-judge", { output: "x" });
      await score(sees, { output: "x" });
      expect(seen).toEqual([false, true, true, false, false]);
    } finally {
      unregisterScorer("sees-judge");
    }
  });

  it("says what to configure when :judge is asked for and no judge is set", async () => {
    for (const name of ["CAIRN_JUDGE_BASE_URL", "CAIRN_JUDGE_API_KEY", "CAIRN_JUDGE_MODEL"]) {
      vi.stubEnv(name, "");
    }
    const attempt = score("faithfulness:judge", { output: "x", context: ["y"] });
    await expect(attempt).rejects.toThrow(ConfigurationError);
    await expect(score("faithfulness:judge", { output: "x", context: ["y"] })).rejects.toThrow(
      'score(): "faithfulness:judge" asks for the LLM judge, and none is configured: call configure({ judge: { baseURL, apiKey, model } }) or set CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL; without :judge a scorer grades by its rules',
    );
    await expect(score("helpfulness", { output: "x" })).rejects.toThrow(
      'score(): the helpfulness scorer is graded by the LLM judge only, and the judge grades only when asked: use "helpfulness:judge"',
    );
    await expect(score("correctnes:judge", { output: "x" })).rejects.toThrow(
      /no scorer "correctnes"/,
    );
  });
});
