import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { addProject, resource, span, startTestServer, type TestServer } from "./helpers.js";

const traceA = `tr_${"1".repeat(32)}`;
const rootId = "a000000000000001";

/** A RAG trace: the agent root answers from what the retrieval span returned. */
function ragBatch(trace: string, answer: string) {
  return {
    resource,
    spans: [
      span({
        trace_id: trace,
        span_id: rootId,
        name: "support-agent",
        kind: "agent",
        input: "How long do refunds take?",
        output: answer,
        expected_output: "Refunds take 5 business days.",
      }),
      span({
        trace_id: trace,
        span_id: "a000000000000002",
        parent_span_id: rootId,
        name: "search-policies",
        kind: "retrieval",
        input: "refund time",
        output: JSON.stringify([
          { pageContent: "Refunds are issued within 5 business days of approval." },
          { pageContent: "Orders ship from our warehouse in Lyon." },
        ]),
      }),
    ],
  };
}

describe("scores over HTTP", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
    const stored = await t.call(
      "POST",
      "/traces",
      ragBatch(traceA, "Refunds take 5 business days."),
    );
    expect(stored.status).toBe(200);
  });
  afterAll(async () => {
    await t.stop();
  });

  it("computes a built-in scorer on the recorded trace and stores it", async () => {
    const response = await t.call("POST", "/scores", {
      scorer_slug: "correctness",
      trace_id: traceA,
    });
    expect(response.status).toBe(201);
    const score = await response.json();
    expect(score).toMatchObject({
      trace_id: traceA,
      span_id: null,
      name: "correctness",
      value: 1,
      source: "scorer",
      scored_by: "scorer:correctness",
    });
    expect(score.score_id).toMatch(/^sc_[0-9a-f]{24}$/);

    // Faithfulness reads the documents of the trace's retrieval span.
    const faithful = await (
      await t.call("POST", "/scores", { scorer_slug: "faithfulness", trace_id: traceA })
    ).json();
    expect(faithful.value).toBe(1);

    const listed = await (await t.call("GET", `/traces/${traceA}/scores`)).json();
    expect(listed.scores.map((each: { name: string }) => each.name)).toEqual([
      "correctness",
      "faithfulness",
    ]);
    const trace = await (await t.call("GET", `/traces/${traceA}`)).json();
    expect(trace.scores).toHaveLength(2);
  });

  it("names the unsupported sentence when the answer strays from the documents", async () => {
    const trace = `tr_${"2".repeat(32)}`;
    await t.call(
      "POST",
      "/traces",
      ragBatch(trace, "Refunds take 5 business days. We also give every customer a free laptop."),
    );
    const score = await (
      await t.call("POST", "/scores", { scorer_slug: "faithfulness", trace_id: trace })
    ).json();
    expect(score.value).toBe(0.5);
    expect(score.reason).toContain("free laptop");
  });

  it("records a score given by a reviewer, with who gave it", async () => {
    const response = await t.call("POST", "/scores", {
      trace_id: traceA,
      span_id: rootId,
      name: "review",
      value: 0,
      comment: "cites the wrong policy",
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      name: "review",
      value: 0,
      span_id: rootId,
      reason: "cites the wrong policy",
      source: "human",
      scored_by: expect.stringMatching(/^key_/),
    });
  });

  it.each([
    [
      "an unknown trace",
      { scorer_slug: "correctness", trace_id: `tr_${"9".repeat(32)}` },
      404,
      /no trace/,
    ],
    [
      "an unknown scorer",
      { scorer_slug: "politeness", trace_id: traceA },
      404,
      /no scorer "politeness"/,
    ],
    [
      "an unknown span",
      { name: "x", value: 1, trace_id: traceA, span_id: "f".repeat(16) },
      404,
      /has no span/,
    ],
    ["a value over 1", { name: "x", value: 7, trace_id: traceA }, 400, /value/],
    ["a bad trace id", { name: "x", value: 1, trace_id: "tr_nope" }, 400, /not a trace id/],
    ["an unknown field", { name: "x", value: 1, trace_id: traceA, stars: 5 }, 400, /stars/],
    // helpfulness has no rules: the judge must be asked for, by name.
    [
      "helpfulness without :judge",
      { scorer_slug: "helpfulness", trace_id: traceA },
      400,
      /graded by the LLM judge only.*"helpfulness:judge"/,
    ],
    // The judge asked for, on a service without one: the service's setup, not the request.
    [
      "correctness:judge without a judge",
      { scorer_slug: "correctness:judge", trace_id: traceA },
      503,
      /correctness:judge scorer asks for the LLM judge.*CAIRN_JUDGE_BASE_URL/,
    ],
    [
      "helpfulness:judge without a judge",
      { scorer_slug: "helpfulness:judge", trace_id: traceA },
      503,
      /helpfulness:judge scorer asks for the LLM judge.*CAIRN_JUDGE_BASE_URL/,
    ],
    [
      "a mode other than :judge",
      { scorer_slug: "correctness:llm", trace_id: traceA },
      400,
      /:judge/,
    ],
  ])(
    "refuses %s with the documented error, storing nothing",
    async (_what, body, status, message) => {
      const before = (await (await t.call("GET", `/traces/${traceA}/scores`)).json()).scores.length;
      const response = await t.call("POST", "/scores", body);
      const error = await response.json();
      expect(response.status).toBe(status);
      expect(error.message).toMatch(message);
      const after = (await (await t.call("GET", `/traces/${traceA}/scores`)).json()).scores.length;
      expect(after).toBe(before);
    },
  );

  it("answers 503 with how to configure a judge when the service has none", async () => {
    const response = await t.call("POST", "/scores/judge", {
      criteria: "Is the answer polite?",
      output: "No.",
    });
    expect(response.status).toBe(503);
    expect((await response.json()).message).toMatch(
      /CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL/,
    );
  });
});

describe("the judge on the service", () => {
  let t: TestServer;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI([
      { json: { score: 0.9, label: "helpful", reason: "It answers the question directly." } },
      { json: { score: 1, label: "correct", reason: "It gives the five days." } },
      { json: { score: 0.2, label: "impolite", reason: "It is curt." } },
      { status: 401, retryAfterMs: null },
    ]);
    t = await startTestServer({
      judge: { baseURL: fake.baseURL, apiKey: "judge-secret-key", model: "gpt-4o-mini" },
    });
    await t.call("POST", "/traces", ragBatch(traceA, "Refunds take 5 business days."));
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it("grades a trace with a scorer, stores the verdict and records the judge's call as an llm span", async () => {
    const response = await t.call("POST", "/scores/judge", {
      scorer_slug: "helpfulness",
      trace_id: traceA,
    });
    expect(response.status).toBe(200);
    const verdict = await response.json();
    expect(verdict).toMatchObject({
      score: 0.9,
      label: "helpful",
      model: "gpt-4o-mini",
      stored: {
        name: "helpfulness:judge",
        value: 0.9,
        source: "judge",
        scored_by: "judge:gpt-4o-mini",
      },
    });
    // The judge saw what the trace recorded.
    const prompt = JSON.stringify(fake.requests[0]?.body);
    expect(prompt).toContain("How long do refunds take?");
    expect(prompt).toContain("Refunds take 5 business days.");

    const judged = await (
      await t.call("GET", "/analytics/traces?tag=cairn.judge&period_start=2026-01-01")
    ).json();
    expect(judged.traces).toHaveLength(1);
    expect(judged.traces[0]).toMatchObject({
      name: "judge helpfulness",
      kind: "llm",
      usage: { total_tokens: 150 },
    });
    expect(judged.traces[0].cost_usd).toBeGreaterThan(0);
  });

  it("grades a plain slug by rules without calling the judge, and asks the judge for :judge", async () => {
    const asked = fake.requests.length;
    for (const slug of ["correctness", "faithfulness", "toxicity"]) {
      const response = await t.call("POST", "/scores", { scorer_slug: slug, trace_id: traceA });
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({
        name: slug,
        source: "scorer",
        scored_by: `scorer:${slug}`,
      });
    }
    // The service has a judge, and no scorer called it.
    expect(fake.requests).toHaveLength(asked);

    const response = await t.call("POST", "/scores", {
      scorer_slug: "correctness:judge",
      trace_id: traceA,
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      name: "correctness:judge",
      value: 1,
      label: "correct",
      source: "judge",
      scored_by: "judge:gpt-4o-mini",
    });
    expect(fake.requests).toHaveLength(asked + 1);
    const prompt = JSON.stringify(fake.requests[asked]?.body);
    expect(prompt).toContain("Refunds take 5 business days.");
  });

  it("grades given texts against criteria without storing anything", async () => {
    const verdict = await (
      await t.call("POST", "/scores/judge", { criteria: "Is the answer polite?", output: "No." })
    ).json();
    expect(verdict).toMatchObject({ score: 0.2, label: "impolite", stored: null });
  });

  it("reports a judge that refuses the key as 502, never leaking the key", async () => {
    const response = await t.call("POST", "/scores/judge", { criteria: "Polite?", output: "Yes." });
    expect(response.status).toBe(502);
    const error = await response.json();
    expect(error.error).toBe("bad_gateway");
    expect(error.message).toMatch(/401/);
    expect(error.message).not.toContain("judge-secret-key");
  });

  it("refuses a request with both a scorer and criteria", async () => {
    const response = await t.call("POST", "/scores/judge", {
      scorer_slug: "helpfulness",
      criteria: "x",
      output: "y",
    });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/either scorer_slug or criteria/);
  });
});

describe("evals: datasets, runs and comparisons over HTTP", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  const result = (query: string, score: number, extra: Record<string, unknown> = {}) => ({
    query,
    output: `answer to ${query}`,
    scores: { correctness: { score, reason: "scripted" } },
    latency_ms: 100 + score * 100,
    cost_usd: 0.001,
    ...extra,
  });

  it("keeps cases in named datasets, keyed by query", async () => {
    const first = await t.call("POST", "/testing/cases", {
      dataset: "refunds",
      cases: [
        { query: "How long do refunds take?", expected_answer: "5 business days" },
        { query: "Can I return shoes?", expected_answer: "yes, within 30 days" },
      ],
    });
    expect(first.status).toBe(201);
    const created = (await first.json()).cases;
    expect(created[0].case_id).toMatch(/^tc_[0-9a-f]{24}$/);

    // The same query again updates its expected answer and keeps its id.
    const again = await (
      await t.call("POST", "/testing/cases", {
        dataset: "refunds",
        query: "How long do refunds take?",
        expected_answer: "five business days",
      })
    ).json();
    expect(again.cases[0].case_id).toBe(created[0].case_id);

    const listed = await (await t.call("GET", "/testing/cases?dataset=refunds")).json();
    expect(listed.cases.map((each: { expected_answer: string }) => each.expected_answer)).toEqual([
      "five business days",
      "yes, within 30 days",
    ]);
    const datasets = await (await t.call("GET", "/testing/datasets")).json();
    expect(datasets.datasets).toEqual([expect.objectContaining({ name: "refunds", cases: 2 })]);
  });

  it("records runs, summarises them and compares two", async () => {
    const base = await (
      await t.call("POST", "/testing/runs", {
        name: "baseline",
        version: "1.0.0",
        results: [result("q1", 1), result("q2", 0.9), result("q3", 0.2)],
      })
    ).json();
    expect(base.run_id).toMatch(/^run_[0-9a-f]{24}$/);
    expect(base.summary).toMatchObject({
      cases: 3,
      passed: 2,
      errors: 0,
      latency_ms: { p50: 190, p95: 200 },
    });
    expect(base.summary.pass_rate).toBeCloseTo(2 / 3, 10);
    expect(base.summary.mean_scores.correctness).toBeCloseTo(0.7, 10);
    expect(base.summary.total_cost_usd).toBeCloseTo(0.003, 10);

    const next = await (
      await t.call("POST", "/testing/runs", {
        name: "candidate",
        version: "1.1.0",
        results: [
          result("q1", 0.4),
          result("q2", 0.92),
          result("q3", 0.9),
          result("q4", 0, { output: null, error: "TypeError: boom" }),
        ],
      })
    ).json();
    const fetched = await (await t.call("GET", `/testing/runs/${next.run_id}`)).json();
    expect(fetched.results).toHaveLength(4);
    expect(fetched.results[3]).toMatchObject({ passed: false, error: "TypeError: boom" });

    const comparison = await (
      await t.call("GET", `/testing/runs/${base.run_id}/compare/${next.run_id}`)
    ).json();
    expect(comparison.regressions.map((each: { query: string }) => each.query)).toEqual(["q1"]);
    expect(comparison.regressions[0].scores.correctness.delta).toBeCloseTo(-0.6, 10);
    expect(comparison.improvements.map((each: { query: string }) => each.query)).toEqual(["q3"]);
    expect(comparison.unchanged).toBe(1);
    expect(comparison.only_in_run).toEqual(["q4"]);
    expect(comparison.only_in_base).toEqual([]);

    const runs = await (await t.call("GET", "/testing/runs")).json();
    expect(runs.runs.map((each: { name: string }) => each.name)).toEqual(["candidate", "baseline"]);
  });

  it("names both traces of each case that changed, so the comparison links to them", async () => {
    const traced = (query: string, score: number, trace: string) =>
      result(query, score, { trace_id: `tr_${trace.repeat(32)}` });
    const base = await (
      await t.call("POST", "/testing/runs", {
        name: "traced base",
        results: [traced("t1", 1, "a"), traced("t2", 0.1, "b"), result("t3", 0.1)],
      })
    ).json();
    const next = await (
      await t.call("POST", "/testing/runs", {
        name: "traced run",
        results: [traced("t1", 0.2, "c"), traced("t2", 1, "d"), traced("t3", 1, "e")],
      })
    ).json();
    const comparison = await (
      await t.call("GET", `/testing/runs/${base.run_id}/compare/${next.run_id}`)
    ).json();
    expect(comparison.regressions).toEqual([
      expect.objectContaining({
        query: "t1",
        base_trace_id: `tr_${"a".repeat(32)}`,
        run_trace_id: `tr_${"c".repeat(32)}`,
      }),
    ]);
    expect(
      comparison.improvements.map((each: Record<string, unknown>) => [
        each.query,
        each.base_trace_id,
        each.run_trace_id,
      ]),
    ).toEqual([
      ["t2", `tr_${"b".repeat(32)}`, `tr_${"d".repeat(32)}`],
      // A case recorded without a trace says so.
      ["t3", null, `tr_${"e".repeat(32)}`],
    ]);
  });

  it("pages runs newest first, each once, and refuses a cursor it did not give", async () => {
    // Runs of a project of their own, so the other tests' runs stay out of the pages.
    const key = "paging-project-key-0123456789";
    await addProject(t, "paging", key);
    const own = (method: string, path: string, body?: unknown) =>
      t.call(method, path, body, { "x-api-key": key });
    for (let index = 0; index < 5; index++) {
      const posted = await own("POST", "/testing/runs", {
        name: `paged ${index}`,
        results: [result(`p${index}`, 1)],
      });
      expect(posted.status).toBe(201);
    }
    const everything = await (await own("GET", "/testing/runs")).json();
    expect(everything.next_cursor).toBeNull();
    const names = everything.runs.map((each: { name: string }) => each.name);
    expect(names).toEqual(["paged 4", "paged 3", "paged 2", "paged 1", "paged 0"]);

    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const body = await (await own("GET", `/testing/runs?limit=2${cursor}`)).json();
      expect(body.runs.length).toBeLessThanOrEqual(2);
      seen.push(...body.runs.map((each: { name: string }) => each.name));
      if (body.next_cursor === null) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(names);

    for (const bad of ["nope", Buffer.from('{"createdAt":1}').toString("base64url")]) {
      const refused = await own("GET", `/testing/runs?cursor=${bad}`);
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toBe("the cursor is not one this API gave out");
    }
    // Each project pages its own runs only.
    const others = await (await t.call("GET", "/testing/runs?limit=200")).json();
    expect(others.runs.map((each: { name: string }) => each.name)).not.toContain("paged 0");
  });

  it.each([
    ["GET", "/testing/runs/run_nope", undefined, 400, /not a test run id/],
    ["GET", `/testing/runs/run_${"0".repeat(24)}`, undefined, 404, /no test run/],
    ["POST", "/testing/runs", { results: [] }, 400, /results/],
    ["POST", "/testing/runs", { results: [result("q", 2)] }, 400, /score/],
    ["POST", "/testing/cases", { dataset: "d" }, 400, /query/],
    ["POST", "/testing/cases", { query: "q", answer: "a" }, 400, /answer/],
  ])(
    "%s %s with bad input answers the documented error",
    async (method, path, body, status, message) => {
      const before = await (await t.call("GET", "/testing/runs")).json();
      const response = await t.call(method, path, body);
      expect(response.status).toBe(status);
      expect((await response.json()).message).toMatch(message);
      const after = await (await t.call("GET", "/testing/runs")).json();
      expect(after.runs).toHaveLength(before.runs.length);
    },
  );
});
