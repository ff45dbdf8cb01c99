// Test cases and test runs on both engines: cases keyed by query within a dataset, datasets in
// byte order, runs paged newest first, results added once each as a run's cases finish, and
// the same answers when two instances upsert the same cases or add the same results at once.
import { expect, it } from "vitest";
import type { ResultInput, RunInput } from "../../src/server/store/evals.js";
import { captureLog } from "../helpers/log.js";
import { eachEngine } from "./engines.js";
import { newProjectId } from "./record-fixtures.js";

function result(index: number, score = 0.9): ResultInput {
  return {
    case_id: null,
    query: `question ${index}`,
    expected_answer: `answer ${index}`,
    output: `output ${index}`,
    scores: { correctness: { score, reason: "compared" } },
    latency_ms: 100 + index,
    cost_usd: 0.001,
    trace_id: null,
  };
}

function results(from: number, count: number): ResultInput[] {
  return Array.from({ length: count }, (_, index) => result(from + index));
}

function running(overrides: Partial<RunInput> = {}): RunInput {
  return {
    name: "nightly",
    pass_threshold: 0.7,
    status: "running",
    total_cases: 6,
    results: [],
    ...overrides,
  };
}

eachEngine("test cases", (engine) => {
  it("keeps cases by query: the same query again updates the case and keeps its id", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const [first] = await store.evals.upsertCases(id, "default", [
      { query: "What is 2+2?", expected_answer: "4", metadata: { topic: "math", tags: ["é", 1] } },
    ]);
    expect(first).toEqual({
      case_id: expect.stringMatching(/^tc_[0-9a-f]{24}$/),
      dataset: "default",
      query: "What is 2+2?",
      expected_answer: "4",
      metadata: { topic: "math", tags: ["é", 1] },
      created_at: expect.stringMatching(/Z$/),
      updated_at: first?.created_at,
    });
    const [again] = await store.evals.upsertCases(id, "default", [{ query: "What is 2+2?" }]);
    expect(again).toEqual({
      ...first,
      expected_answer: null,
      metadata: {},
      updated_at: expect.stringMatching(/Z$/),
    });
    expect((again?.updated_at ?? "") >= (first?.created_at ?? "")).toBe(true);
    expect(await store.evals.cases(id)).toEqual([again]);
  });

  it("takes the last of a query given twice in one request, as two requests would", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const answered = await store.evals.upsertCases(id, "default", [
      { query: "q", expected_answer: "first" },
      { query: "other" },
      { query: "q", expected_answer: "last" },
    ]);
    expect(answered.map((each) => [each.query, each.expected_answer])).toEqual([
      ["q", "last"],
      ["other", null],
    ]);
    expect(await store.evals.cases(id)).toEqual(answered);
  });

  it("lists cases in the order they were given, dataset by dataset in byte order", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    // Queries whose order is neither alphabetical nor the order of any hash of them.
    const queries = Array.from(
      { length: 30 },
      (_, index) => `case ${(index * 7919) % 30} ${"x".repeat(index)}`,
    );
    const given = await store.evals.upsertCases(
      id,
      "b",
      queries.map((query) => ({ query })),
    );
    expect(given.map((each) => each.query)).toEqual(queries);
    // Again with old and new ones mixed: the new ones come after, in the order given.
    const more = ["new 2", queries[3] as string, "new 1", queries[0] as string];
    await store.evals.upsertCases(
      id,
      "b",
      more.map((query) => ({ query })),
    );
    const names = ["B", "a", "Z", "é", "b2", "a b"];
    for (const name of names) await store.evals.upsertCases(id, name, [{ query: "one" }]);
    expect((await store.evals.cases(id, "b")).map((each) => each.query)).toEqual([
      ...queries,
      "new 2",
      "new 1",
    ]);
    const all = await store.evals.cases(id);
    expect([...new Set(all.map((each) => each.dataset))]).toEqual([
      "B",
      "Z",
      "a",
      "a b",
      "b",
      "b2",
      "é",
    ]);
    const datasets = await store.evals.datasets(id);
    expect(datasets.map((each) => [each.name, each.cases])).toEqual([
      ["B", 1],
      ["Z", 1],
      ["a", 1],
      ["a b", 1],
      ["b", 32],
      ["b2", 1],
      ["é", 1],
    ]);
    const b = datasets.find((each) => each.name === "b");
    expect(b).toEqual({
      name: "b",
      cases: 32,
      created_at: given[0]?.created_at,
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(await store.evals.cases(id, "missing")).toEqual([]);
  });

  it("keys a long query (a million characters) like a short one", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const query = `${"long ".repeat(200_000)}end`;
    const [first] = await store.evals.upsertCases(id, "default", [{ query }]);
    const [second] = await store.evals.upsertCases(id, "default", [
      { query, expected_answer: "x" },
    ]);
    expect(second?.case_id).toBe(first?.case_id);
    expect(second?.query).toBe(query);
    const [near] = await store.evals.upsertCases(id, "default", [{ query: `${query}!` }]);
    expect(near?.case_id).not.toBe(first?.case_id);
  });

  it("keeps each project's cases to itself, for the same dataset and query", async (context) => {
    const store = await engine.open(context);
    const mine = await newProjectId(store);
    const theirs = await newProjectId(store);
    const [kept] = await store.evals.upsertCases(mine, "default", [
      { query: "q", expected_answer: "mine" },
    ]);
    const [other] = await store.evals.upsertCases(theirs, "default", [
      { query: "q", expected_answer: "theirs" },
    ]);
    expect(other?.case_id).not.toBe(kept?.case_id);
    expect(await store.evals.cases(mine)).toEqual([kept]);
    expect(await store.evals.datasets(theirs)).toEqual([
      { name: "default", cases: 1, created_at: other?.created_at, updated_at: other?.updated_at },
    ]);
  });

  it("answers what it stored for text PostgreSQL cannot hold as it is (NUL)", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const given = await store.evals.upsertCases(id, "data\u0000set", [
      { query: "q\u0000", expected_answer: "a\u0000", metadata: { "k\u0000": "v\u0000" } },
    ]);
    expect(await store.evals.cases(id, "data\u0000set")).toEqual(given);
    expect(await store.evals.cases(id)).toEqual(given);
  });

  it("makes one case of a query two instances upsert at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([
        store.evals.upsertCases(id, "default", [{ query: `q${round}`, expected_answer: "a" }]),
        other.evals.upsertCases(id, "default", [{ query: `q${round}`, expected_answer: "b" }]),
      ]);
      expect(a?.[0]?.case_id).toBe(b?.[0]?.case_id);
    }
    expect(await store.evals.cases(id)).toHaveLength(10);
  });

  it("upserts many cases given in opposite orders by two instances at once, each once, without a deadlock", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    const queries = Array.from({ length: 200 }, (_, index) => `query ${index}`);
    // A deadlock would be retried, after a second (deadlock_timeout) and with a log line.
    const log = captureLog();
    try {
      for (let round = 0; round < 5; round++) {
        const [a, b] = await Promise.all([
          store.evals.upsertCases(
            id,
            "default",
            queries.map((query) => ({ query, metadata: { round } })),
          ),
          other.evals.upsertCases(
            id,
            "default",
            [...queries].reverse().map((query) => ({ query })),
          ),
        ]);
        const ids = new Map(a.map((each) => [each.query, each.case_id]));
        for (const each of b) expect(each.case_id).toBe(ids.get(each.query));
      }
    } finally {
      log.restore();
    }
    expect(log.messages).toEqual([]);
    const stored = await store.evals.cases(id);
    expect(stored).toHaveLength(200);
    expect(new Set(stored.map((each) => each.query)).size).toBe(200);
  });
});

eachEngine("test runs", (engine) => {
  it("records a run given whole, with each case's pass and the summary", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const run = await store.evals.addRun(id, {
      dataset: "default",
      version: "1.0.0",
      pass_threshold: 0.7,
      results: [result(0, 0.9), result(1, 0.5), { ...result(2), error: "timeout", output: null }],
    });
    expect(run).toEqual({
      run_id: expect.stringMatching(/^run_[0-9a-f]{24}$/),
      name: `run ${run.created_at}`,
      dataset: "default",
      version: "1.0.0",
      pass_threshold: 0.7,
      created_at: expect.stringMatching(/Z$/),
      status: "finished",
      total_cases: null,
      summary: expect.objectContaining({ cases: 3, passed: 1, errors: 1 }),
      results: [
        expect.objectContaining({ query: "question 0", passed: true }),
        expect.objectContaining({ query: "question 1", passed: false }),
        expect.objectContaining({ query: "question 2", passed: false, error: "timeout" }),
      ],
    });
    expect(await store.evals.run(id, run.run_id)).toEqual(run);
    expect(await store.evals.run(id, "run_000000000000000000000000")).toBeUndefined();
    const { results: _results, ...listed } = run;
    expect(await store.evals.runPage(id, { limit: 10 })).toEqual({ runs: [listed], next: null });
  });

  it("pages runs newest first, each once, with the cursor it gives", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const made = [];
    for (let index = 0; index < 7; index++) {
      made.push(
        await store.evals.addRun(id, {
          name: `run ${index}`,
          pass_threshold: 0.5,
          results: [result(index)],
        }),
      );
    }
    const seen: string[] = [];
    let page = await store.evals.runPage(id, { limit: 3 });
    seen.push(...page.runs.map((each) => each.name));
    while (page.next !== null) {
      page = await store.evals.runPage(id, { limit: 3, cursor: page.next });
      seen.push(...page.runs.map((each) => each.name));
    }
    expect(seen).toEqual(made.map((each) => each.name).reverse());
    // A cursor before everything gives an empty last page.
    expect(
      await store.evals.runPage(id, { limit: 3, cursor: { createdAt: "0000", row: 0 } }),
    ).toEqual({ runs: [], next: null });
  });

  it("takes results as the cases finish, once each, and finishes the run", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const run = await store.evals.addRun(id, running());
    expect(run).toEqual(
      expect.objectContaining({ status: "running", total_cases: 6, results: [] }),
    );
    const first = await store.evals.addResults(id, run.run_id, {
      offset: 0,
      results: results(0, 2),
      finished: false,
    });
    expect(first).toEqual(
      expect.objectContaining({
        status: "running",
        summary: expect.objectContaining({ cases: 2 }),
      }),
    );
    // The same request again (its answer was lost), then one overlapping it.
    await store.evals.addResults(id, run.run_id, {
      offset: 0,
      results: results(0, 2),
      finished: false,
    });
    await store.evals.addResults(id, run.run_id, {
      offset: 1,
      results: results(1, 3),
      finished: false,
    });
    const finished = await store.evals.addResults(id, run.run_id, {
      offset: 4,
      results: results(4, 2),
      finished: true,
    });
    expect(finished).toEqual(
      expect.objectContaining({
        status: "finished",
        summary: expect.objectContaining({ cases: 6 }),
      }),
    );
    const detail = await store.evals.run(id, run.run_id);
    expect(detail?.results.map((each) => each.query)).toEqual(
      results(0, 6).map((each) => each.query),
    );
    // The finishing request again answers the run as it is; anything else is refused.
    expect(
      await store.evals.addResults(id, run.run_id, {
        offset: 4,
        results: results(4, 2),
        finished: true,
      }),
    ).toEqual(finished);
    expect(
      await store.evals.addResults(id, run.run_id, {
        offset: 6,
        results: results(6, 1),
        finished: false,
      }),
    ).toEqual({ refused: "finished" });
    expect(await store.evals.run(id, run.run_id)).toEqual(detail);
  });

  it("refuses a gap, an empty finish, an unknown run and too many results, changing nothing", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const mine = await newProjectId(store);
    const run = await store.evals.addRun(id, running({ results: results(0, 2) }));
    expect(
      await store.evals.addResults(id, run.run_id, {
        offset: 5,
        results: results(5, 1),
        finished: false,
      }),
    ).toEqual({
      refused: "gap",
      stored: 2,
    });
    expect(
      await store.evals.addResults(mine, run.run_id, {
        offset: 2,
        results: results(2, 1),
        finished: false,
      }),
    ).toEqual({
      refused: "not_found",
    });
    expect(
      await store.evals.addResults(id, "run_000000000000000000000000", {
        offset: 0,
        results: [],
        finished: true,
      }),
    ).toEqual({
      refused: "not_found",
    });
    expect(await store.evals.run(mine, run.run_id)).toBeUndefined();
    expect(await store.evals.runPage(mine, { limit: 10 })).toEqual({ runs: [], next: null });
    const empty = await store.evals.addRun(id, running());
    expect(
      await store.evals.addResults(id, empty.run_id, { offset: 0, results: [], finished: true }),
    ).toEqual({
      refused: "empty",
    });
    const full = await store.evals.addRun(
      id,
      running({ total_cases: undefined, results: results(0, 9_999) }),
    );
    expect(
      await store.evals.addResults(id, full.run_id, {
        offset: 9_999,
        results: results(9_999, 2),
        finished: false,
      }),
    ).toEqual({
      refused: "too_many",
    });
    expect(await store.evals.run(id, run.run_id)).toEqual(run);
    expect(await store.evals.run(id, empty.run_id)).toEqual(empty);
    expect((await store.evals.run(id, full.run_id))?.results).toHaveLength(9_999);
  });

  it("adds results once when two instances are given the same ones at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    const run = await store.evals.addRun(id, running({ total_cases: 20 }));
    for (let offset = 0; offset < 20; offset += 4) {
      const finished = offset === 16;
      const answers = await Promise.all([
        store.evals.addResults(id, run.run_id, { offset, results: results(offset, 4), finished }),
        other.evals.addResults(id, run.run_id, { offset, results: results(offset, 4), finished }),
      ]);
      for (const answer of answers) expect(answer).not.toHaveProperty("refused");
    }
    const detail = await other.evals.run(id, run.run_id);
    expect(detail?.status).toBe("finished");
    expect(detail?.results.map((each) => each.query)).toEqual(
      results(0, 20).map((each) => each.query),
    );
  });

  it("loses no result when two instances add overlapping ones at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    // Many results stored already: each addition reads and writes them all, which takes a while.
    const stored = 2_000;
    for (let round = 0; round < 10; round++) {
      const run = await store.evals.addRun(
        id,
        running({ total_cases: undefined, results: results(0, stored) }),
      );
      // One sends four more; the other, six (it had more when it sent).
      await Promise.all([
        store.evals.addResults(id, run.run_id, {
          offset: stored,
          results: results(stored, 4),
          finished: false,
        }),
        other.evals.addResults(id, run.run_id, {
          offset: stored,
          results: results(stored, 6),
          finished: false,
        }),
      ]);
      const detail = await store.evals.run(id, run.run_id);
      expect(detail?.results.map((each) => each.query)).toEqual(
        results(0, stored + 6).map((each) => each.query),
      );
      expect(detail?.summary.cases).toBe(stored + 6);
    }
  });
});
