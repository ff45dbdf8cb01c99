import { configure, runTests, shutdown } from "cairn-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readServerSentEvents } from "../../src/core/http/sse.js";
import { addProject, startTestServer, type TestServer } from "./helpers.js";

// Test runs given their results as their cases finish: the API (offsets that make a request
// sent again harmless, a finished run closed, another project's run out of reach), and
// runTests() recording a run that way, its progress seen on GET /events.

const result = (query: string, score = 1) => ({
  query,
  output: "answer",
  scores: { correctness: { score, reason: "" } },
  latency_ms: 3,
});

interface Run {
  run_id: string;
  status: string;
  total_cases: number | null;
  summary: { cases: number; passed: number };
}

describe("POST /testing/runs/{run_id}/results", () => {
  let t: TestServer;
  const otherKey = "progress-other-project-key-0123";
  beforeAll(async () => {
    t = await startTestServer();
    await addProject(t, "other", otherKey);
  });
  afterAll(async () => {
    await t.stop();
  });

  async function start(body: Record<string, unknown> = {}): Promise<Run> {
    const response = await t.call("POST", "/testing/runs", {
      name: "live",
      status: "running",
      total_cases: 3,
      results: [],
      ...body,
    });
    expect(response.status).toBe(201);
    return (await response.json()) as Run;
  }

  const add = (runId: string, body: unknown, key = t.apiKey) =>
    t.call("POST", `/testing/runs/${runId}/results`, body, { "x-api-key": key });

  async function stored(runId: string) {
    const response = await t.call("GET", `/testing/runs/${runId}`);
    return (await response.json()) as Run & { results: Array<{ query: string; passed: boolean }> };
  }

  it("takes results as cases finish, once each, and finishes the run", async () => {
    const run = await start();
    expect(run).toMatchObject({ status: "running", total_cases: 3, summary: { cases: 0 } });
    const { runs } = (await (await t.call("GET", "/testing/runs")).json()) as { runs: Run[] };
    expect(runs.find((each) => each.run_id === run.run_id)?.status).toBe("running");

    const first = await add(run.run_id, { offset: 0, results: [result("a"), result("b", 0)] });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ status: "running", summary: { cases: 2 } });
    // The same request again (its answer was lost): nothing is added twice.
    const again = await add(run.run_id, { offset: 0, results: [result("a"), result("b", 0)] });
    expect((await again.json()).summary.cases).toBe(2);
    // One that overlaps adds only what is new.
    const overlap = await add(run.run_id, { offset: 1, results: [result("b", 0), result("c")] });
    expect((await overlap.json()).summary).toMatchObject({ cases: 3, passed: 2 });

    const finished = await add(run.run_id, { offset: 3, results: [result("d")], finished: true });
    expect(await finished.json()).toMatchObject({ status: "finished", summary: { cases: 4 } });
    // The finishing request again is answered the same; anything else is refused.
    const finishedAgain = await add(run.run_id, {
      offset: 3,
      results: [result("d")],
      finished: true,
    });
    expect(finishedAgain.status).toBe(200);
    const late = await add(run.run_id, { offset: 4, results: [result("e")] });
    expect(late.status).toBe(409);
    expect((await late.json()).message).toContain("is finished");

    const whole = await stored(run.run_id);
    expect(whole.results.map((each) => [each.query, each.passed])).toEqual([
      ["a", true],
      ["b", false],
      ["c", true],
      ["d", true],
    ]);
  });

  it("refuses a gap, naming where to send from, and leaves the run as it was", async () => {
    const run = await start();
    await add(run.run_id, { offset: 0, results: [result("a")] });
    const gap = await add(run.run_id, { offset: 5, results: [result("f")] });
    expect(gap.status).toBe(409);
    const body = await gap.json();
    expect(body).toMatchObject({ error: "conflict" });
    expect(body.message).toContain("send from offset 1");
    expect((await stored(run.run_id)).summary.cases).toBe(1);
  });

  it("keeps another project's key away from a run", async () => {
    const run = await start();
    const other = await add(run.run_id, { offset: 0, results: [result("x")] }, otherKey);
    expect(other.status).toBe(404);
    const finishing = await add(
      run.run_id,
      { offset: 0, results: [result("x")], finished: true },
      otherKey,
    );
    expect(finishing.status).toBe(404);
    expect(await stored(run.run_id)).toMatchObject({ status: "running", summary: { cases: 0 } });
  });

  it("refuses bad requests with a 400 naming the problem, and stores nothing of them", async () => {
    const run = await start();
    for (const [path, body, named] of [
      [`/testing/runs/${run.run_id}/results`, { offset: -1, results: [] }, /offset/],
      [`/testing/runs/${run.run_id}/results`, { offset: 0, results: [], extra: 1 }, /extra/],
      [`/testing/runs/${run.run_id}/results`, { offset: 0, results: [result("q", 2)] }, /score/],
      [
        `/testing/runs/${run.run_id}/results`,
        { offset: 0, results: [], finished: true },
        /at least one result/,
      ],
      ["/testing/runs/run_nope/results", { offset: 0, results: [] }, /not a test run id/],
      ["/testing/runs", { status: "running", total_cases: 0, results: [] }, /total_cases/],
      ["/testing/runs", { results: [] }, /at least one result/],
    ] as const) {
      const response = await t.call("POST", path, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const answer = await response.json();
      expect(answer.error).toBe("invalid_request");
      expect(answer.message).toMatch(named);
    }
    expect(await stored(run.run_id)).toMatchObject({ status: "running", summary: { cases: 0 } });
    const unknown = await add(`run_${"0".repeat(24)}`, { offset: 0, results: [] });
    expect(unknown.status).toBe(404);
  });

  it("holds a run to 10,000 results, however they come", async () => {
    const run = await start({ total_cases: 10_000 });
    const many = Array.from({ length: 10_000 }, (_, index) => result(`q${index}`));
    expect((await add(run.run_id, { offset: 0, results: many })).status).toBe(200);
    const over = await add(run.run_id, { offset: 10_000, results: [result("one more")] });
    expect(over.status).toBe(400);
    expect((await over.json()).message).toContain("at most 10000 results");
    expect((await stored(run.run_id)).summary.cases).toBe(10_000);
  });
});

describe("runTests() recording a run as its cases finish", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    configure({ endpoint: t.server.url, apiKey: t.apiKey });
  });
  afterAll(async () => {
    await shutdown();
    await t.stop();
  });

  it("shows the run's progress on GET /events, then the whole run, in the cases' order", async () => {
    const abort = new AbortController();
    const response = await fetch(`${t.server.url}/events`, {
      headers: { "x-api-key": t.apiKey },
      signal: abort.signal,
    });
    const runs: Run[] = [];
    let sawProgress: () => void = () => undefined;
    const progressSeen = new Promise<void>((resolve) => {
      sawProgress = resolve;
    });
    let ready: () => void = () => undefined;
    const streamReady = new Promise<void>((resolve) => {
      ready = resolve;
    });
    let sawFinished: (run: Run) => void = () => undefined;
    const finishedSeen = new Promise<Run>((resolve) => {
      sawFinished = resolve;
    });
    const reading = (async () => {
      try {
        for await (const { event, data } of readServerSentEvents(response.body as never)) {
          if (event === "ready") ready();
          if (event !== "test-run") continue;
          const run = JSON.parse(data) as Run;
          runs.push(run);
          if (run.status === "running" && run.summary.cases >= 20) sawProgress();
          if (run.status === "finished") sawFinished(run);
        }
      } catch {
        // Aborted at the end of the test.
      }
    })();
    await streamReady;

    // The last ten cases wait until the first twenty are seen recorded: the progress between.
    const cases = Array.from({ length: 30 }, (_, index) => ({
      input: `question ${index}`,
      expected_output: "answer",
    }));
    const report = await runTests({
      cases,
      concurrency: 3,
      task: async (query) => {
        if (Number(query.split(" ")[1]) >= 20) await progressSeen;
        return "answer";
      },
    });
    expect(report.uploadError).toBeUndefined();
    const finished = await finishedSeen;
    abort.abort();
    await reading;

    const ours = runs.filter((run) => run.run_id === report.runId);
    expect(ours[0]).toMatchObject({ status: "running", total_cases: 30 });
    expect(ours.some((run) => run.summary.cases > 0 && run.summary.cases < 30)).toBe(true);
    const counts = ours.map((run) => run.summary.cases);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(finished).toMatchObject({ run_id: report.runId, summary: { cases: 30, passed: 30 } });
    const { runs: listed } = (await (await t.call("GET", "/testing/runs")).json()) as {
      runs: Run[];
    };
    expect(finished).toEqual(listed.find((run) => run.run_id === report.runId));
    const whole = (await (await t.call("GET", `/testing/runs/${report.runId}`)).json()) as {
      results: Array<{ query: string; trace_id: string }>;
    };
    expect(whole.results.map((each) => each.query)).toEqual(cases.map((each) => each.input));
    expect(whole.results.map((each) => each.trace_id)).toEqual(
      report.results.map((each) => each.trace_id),
    );
  });
});
