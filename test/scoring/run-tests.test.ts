import {
  ConfigurationError,
  configure,
  createTestCases,
  currentSpan,
  formatTestReport,
  getTestRun,
  observe,
  registerScorer,
  runTests,
  shutdown,
  unregisterScorer,
} from "cairn-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

const policies = [
  { pageContent: "Refunds are issued within 5 business days of approval." },
  { pageContent: "Shoes can be returned within 30 days if unworn." },
];

// A small RAG app: a retrieval span, then an llm span with usage (so a cost), then the answer.
const retrieve = observe(async (_query: string) => policies, {
  kind: "retrieval",
  spanName: "search-policies",
});
const generate = observe(
  async (query: string) => {
    currentSpan().setTokenUsage({ prompt_tokens: 1_000, completion_tokens: 200 });
    if (query.includes("crash")) throw new TypeError("the model timed out");
    if (query.includes("refund")) return "Refunds take 5 business days.";
    if (query.includes("shoes")) return "Yes, shoes can be returned within 30 days.";
    return "I do not know, but we ship a free laptop with every order.";
  },
  { kind: "llm", model: "gpt-4o-mini", spanName: "answer" },
);
const app = async (query: string) => {
  await retrieve(query);
  return generate(query);
};

describe("runTests against the service", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
    configure({ endpoint: t.server.url, apiKey: t.apiKey });
    await createTestCases("support", [
      { input: "How long does a refund take?", expected_output: "5 business days" },
      { input: "Can I return shoes?", expected_output: "yes, within 30 days" },
      { query: "Do you ship laptops?", expected_answer: "no" },
    ]);
  });
  afterAll(async () => {
    await shutdown();
    await t.stop();
  });

  it("runs a stored dataset through the task, scores it, and records the run", async () => {
    const seen: number[] = [];
    const report = await runTests({
      dataset: "support",
      task: app,
      scorers: ["correctness", "faithfulness"],
      version: "1.4.0",
      concurrency: 2,
      onProgress: (done) => seen.push(done),
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(report.summary.cases).toBe(3);
    expect(report.summary.passed).toBe(2);
    expect(report.summary.pass_rate).toBeCloseTo(2 / 3, 10);
    const refund = report.results.find((each) => each.query === "How long does a refund take?");
    expect(refund?.scores.correctness?.score).toBeGreaterThanOrEqual(0.8);
    expect(report.summary.mean_scores.correctness).toBeGreaterThan(0.4);
    // 3 llm calls of 1,000 + 200 tokens at gpt-4o-mini's price.
    expect(report.summary.total_cost_usd).toBeCloseTo((3 * (1_000 * 0.15 + 200 * 0.6)) / 1e6, 9);
    expect(report.summary.latency_ms.p95).not.toBeNull();

    const laptop = report.results.find((each) => each.query === "Do you ship laptops?");
    expect(laptop?.passed).toBe(false);
    // Faithfulness read the documents of the case's own retrieval span.
    expect(laptop?.scores.faithfulness?.reason).toContain("free laptop");
    expect(report.worst[0]?.query).toBe("Do you ship laptops?");

    expect(report.runId).toMatch(/^run_/);
    const stored = await getTestRun(report.runId as string);
    expect(stored.summary.passed).toBe(2);
    expect(stored.version).toBe("1.4.0");
    expect(stored.results.every((each) => each.case_id?.startsWith("tc_"))).toBe(true);

    // Each case is a trace on the service, with its spans.
    const trace = await (await t.call("GET", `/traces/${laptop?.trace_id}`)).json();
    expect(trace).toMatchObject({ name: "test case", span_count: 3, version: "1.4.0" });

    const text = formatTestReport(report);
    expect(text).toContain("pass rate");
    expect(text).toContain("66.7% (2 of 3");
    expect(text).toContain("Do you ship laptops?");
  });

  it("records a case whose task throws as an error, and goes on", async () => {
    const report = await runTests({
      cases: [
        { input: "please crash now", expected_output: "x" },
        { input: "How long does a refund take?", expected_output: "5 business days" },
      ],
      task: app,
    });
    expect(report.summary).toMatchObject({ cases: 2, passed: 1, errors: 1 });
    const crashed = report.results[0];
    expect(crashed?.error).toBe("TypeError: the model timed out");
    expect(crashed?.scores.correctness?.score).toBeNull();
    expect(formatTestReport(report)).toContain("error: TypeError: the model timed out");
  });

  it("gives each case a trace of its own, even inside an observed call", async () => {
    const outer = observe(
      () =>
        runTests({
          cases: [
            { input: "How long does a refund take?", expected_output: "5 business days" },
            { input: "Can I return shoes?", expected_output: "yes, within 30 days" },
          ],
          task: app,
          scorers: ["faithfulness"],
          upload: false,
        }),
      { spanName: "nightly evals" },
    );
    const report = await outer();
    const [first, second] = report.results;
    expect(first?.trace_id).not.toBe(second?.trace_id);
    for (const result of report.results) {
      // Each case's own llm call and its own documents, not its neighbour's.
      expect(result.cost_usd).toBeCloseTo((1_000 * 0.15 + 200 * 0.6) / 1e6, 9);
      expect(result.scores.faithfulness?.score).toBe(1);
    }
  });

  it("cuts what the service would refuse, and keeps the report when the upload fails", async () => {
    const report = await runTests({
      cases: [{ input: "long", expected_output: "x" }],
      task: () => "y".repeat(1_200_000),
      scorers: [
        {
          name: "wordy",
          scorer: () => ({ score: 1, label: "l".repeat(500), reason: "r".repeat(20_000) }),
        },
      ],
    });
    const [only] = report.results;
    expect(only?.output?.length).toBe(1_000_000);
    expect(only?.scores.wordy?.reason.length).toBe(10_000);
    expect(only?.scores.wordy?.label?.length).toBe(200);
    expect(report.uploadError).toBeUndefined();
    expect(report.runId).toMatch(/^run_/);

    // The service refuses the run (an unknown field): the report is whole, with why.
    const refused = await runTests({
      cases: [{ input: "q", expected_output: "a" }],
      task: () => "a",
      version: "x".repeat(65),
    });
    expect(refused.runId).toBeUndefined();
    expect(refused.uploadError).toMatch(/version/);
    expect(refused.summary.passed).toBe(1);
  });

  it("counts a task that hangs as an error, and goes on", async () => {
    const report = await runTests({
      cases: [
        { input: "hang", expected_output: "a" },
        { input: "q", expected_output: "a" },
      ],
      task: (query) => (query === "hang" ? new Promise(() => {}) : "a"),
      timeoutMs: 200,
      upload: false,
    });
    expect(report.results[0]?.error).toBe("Error: the task did not finish within 200 ms");
    expect(report.results[1]?.passed).toBe(true);
  });

  it("uses a registered scorer and one given inline", async () => {
    registerScorer("mentions-days", ({ output }) => ({
      score: /days/.test(output) ? 1 : 0,
      reason: /days/.test(output) ? "gives a number of days" : "gives no delay",
    }));
    try {
      const report = await runTests({
        cases: [{ input: "How long does a refund take?", expected_output: "5 business days" }],
        task: app,
        scorers: [
          "mentions-days",
          {
            name: "short",
            scorer: ({ output }) => ({ score: output.length < 80 ? 1 : 0, reason: "length" }),
          },
        ],
        upload: false,
      });
      expect(report.runId).toBeUndefined();
      expect(report.summary.mean_scores).toEqual({ "mentions-days": 1, short: 1 });
    } finally {
      unregisterScorer("mentions-days");
    }
  });

  it.each([
    [{ task: app }, /give a dataset .* or cases/],
    [{ cases: [{ input: "q" }], task: "nope" }, /task must be a function/],
    [{ cases: [{ input: "q" }], task: app, scorers: ["politeness"] }, /no scorer "politeness"/],
    [{ cases: [{ input: "q" }], task: app, concurrency: 0 }, /concurrency must be/],
    [{ cases: [{ answer: "q" }], task: app }, /case 0: .*answer/],
    [
      {
        cases: [{ input: "q" }],
        task: app,
        scorers: [{ name: "__proto__", scorer: () => ({ score: 1, reason: "" }) }],
      },
      /scorer name "__proto__"/,
    ],
    [
      { cases: [{ input: "q" }], task: app, scorers: ["correctness", "correctness"] },
      /given twice/,
    ],
    [{ dataset: "nothing-here", task: app }, /the dataset "nothing-here" has no cases/],
  ])(
    "refuses bad options with a ConfigurationError that names the problem (%#)",
    async (options, message) => {
      const attempt = runTests(options as never);
      await expect(attempt).rejects.toThrow(ConfigurationError);
      await expect(runTests(options as never)).rejects.toThrow(message);
    },
  );

  it("refuses, before any case runs, a judge-only scorer without :judge and :judge without a judge", async () => {
    let calls = 0;
    const task = () => {
      calls++;
      return "a";
    };
    const cases = [{ input: "q", expected_output: "a" }];
    await expect(runTests({ cases, task, scorers: ["helpfulness"] })).rejects.toThrow(
      'runTests(): the helpfulness scorer is graded by the LLM judge only, and the judge grades only when asked: use "helpfulness:judge"',
    );
    const asked = runTests({ cases, task, scorers: ["correctness", "correctness:judge"] });
    await expect(asked).rejects.toThrow(ConfigurationError);
    await expect(
      runTests({ cases, task, scorers: ["correctness", "correctness:judge"] }),
    ).rejects.toThrow(
      /^runTests\(\): "correctness:judge" asks for the LLM judge, and none is configured: call configure\(\{ judge: \{ baseURL, apiKey, model \} \}\) or set CAIRN_JUDGE_BASE_URL/,
    );
    expect(calls).toBe(0);
  });
});

describe("runTests with the LLM judge", () => {
  let t: TestServer;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    t = await startTestServer();
    fake = await startFakeOpenAI([
      { json: { score: 0.8, label: "helpful", reason: "Answers with the delay." } },
      { status: 500 },
      { status: 500 },
      { status: 500 },
      { status: 500 },
    ]);
  });
  afterEach(async () => {
    await shutdown();
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it("grades with configure({ judge }), records the judge's llm span, and turns a failing judge into a null score", async () => {
    configure({
      endpoint: t.server.url,
      apiKey: t.apiKey,
      judge: { baseURL: fake.baseURL, apiKey: "sk-test", model: "gpt-4o-mini", maxRetries: 3 },
    });
    const report = await runTests({
      cases: [{ input: "How long does a refund take?" }, { input: "Can I return shoes?" }],
      task: app,
      scorers: ["helpfulness:judge"],
      concurrency: 1,
    });
    expect(report.results[0]?.scores["helpfulness:judge"]).toEqual({
      score: 0.8,
      label: "helpful",
      reason: "Answers with the delay.",
    });
    // The second case met a judge answering 500 four times: undecided, with why.
    expect(report.results[1]?.scores["helpfulness:judge"]).toMatchObject({
      score: null,
      label: "judge_error",
    });
    expect(report.results[1]?.scores["helpfulness:judge"]?.reason).toMatch(/500/);
    expect(report.summary.passed).toBe(1);
    expect(fake.requests).toHaveLength(5);

    // Each judge call is an llm span of its own trace, exported like the app's spans.
    const judged = await (
      await t.call("GET", "/analytics/traces?name=judge%20helpfulness&period_start=2026-01-01")
    ).json();
    expect(judged.traces.map((each: { status: string }) => each.status).sort()).toEqual([
      "error",
      "ok",
    ]);
    const ok = judged.traces.find((each: { status: string }) => each.status === "ok");
    expect(ok).toMatchObject({ kind: "llm", usage: { total_tokens: 150 } });
    expect(ok.cost_usd).toBeGreaterThan(0);
  });
});
