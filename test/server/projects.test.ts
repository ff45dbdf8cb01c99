import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectStore } from "../../src/server/store/projects.js";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

describe("two projects on one server", () => {
  let t: TestServer;
  const otherKey = "other-project-key-123456";
  const shared = `tr_${"9".repeat(32)}`;

  beforeAll(async () => {
    t = await startTestServer();
    // A second project, as an admin command would create it.
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
    new ProjectStore(db).createProject("other", otherKey);
    db.close();
  });
  afterAll(async () => {
    await t.stop();
  });

  it("never shows one project's traces to the other, even for the same trace id", async () => {
    await t.call("POST", "/traces", {
      resource,
      spans: [span({ trace_id: shared, name: "mine" })],
    });
    const asOther = (method: string, path: string, body?: unknown) =>
      t.call(method, path, body, { "x-api-key": otherKey });
    expect((await asOther("GET", `/traces/${shared}`)).status).toBe(404);
    const list = await (await asOther("GET", "/analytics/traces?period_start=2026-01-01")).json();
    expect(list.traces).toEqual([]);
    await asOther("POST", "/traces", {
      resource,
      spans: [span({ trace_id: shared, name: "theirs" })],
    });
    const mine = await (await t.call("GET", `/traces/${shared}`)).json();
    const theirs = await (await asOther("GET", `/traces/${shared}`)).json();
    expect([mine.name, mine.span_count]).toEqual(["mine", 1]);
    expect([theirs.name, theirs.span_count]).toEqual(["theirs", 1]);
  });

  it("never shows or takes one project's scores, cases and test runs from the other", async () => {
    const asOther = (method: string, path: string, body?: unknown) =>
      t.call(method, path, body, { "x-api-key": otherKey });
    const onlyMine = `tr_${"8".repeat(32)}`;
    await t.call("POST", "/traces", { resource, spans: [span({ trace_id: onlyMine })] });
    const score = await t.call("POST", "/scores", { trace_id: onlyMine, name: "review", value: 1 });
    expect(score.status).toBe(201);
    await t.call("POST", "/testing/cases", { dataset: "mine", query: "q", expected_answer: "a" });
    const run = await (
      await t.call("POST", "/testing/runs", {
        results: [{ query: "q", output: "a", scores: {}, latency_ms: 1 }],
      })
    ).json();

    expect((await asOther("GET", `/traces/${onlyMine}/scores`)).status).toBe(404);
    for (const body of [
      { trace_id: onlyMine, name: "review", value: 0 },
      { trace_id: onlyMine, scorer_slug: "correctness" },
    ]) {
      expect((await asOther("POST", "/scores", body)).status).toBe(404);
    }
    expect((await asOther("GET", `/testing/runs/${run.run_id}`)).status).toBe(404);
    expect((await asOther("GET", `/testing/runs/${run.run_id}/compare/${run.run_id}`)).status).toBe(
      404,
    );
    expect((await (await asOther("GET", "/testing/runs")).json()).runs).toEqual([]);
    expect((await (await asOther("GET", "/testing/cases")).json()).cases).toEqual([]);
    expect((await (await asOther("GET", "/testing/datasets")).json()).datasets).toEqual([]);
    // Nothing the other project tried reached this one's trace.
    const mine = await (await t.call("GET", `/traces/${onlyMine}/scores`)).json();
    expect(mine.scores).toHaveLength(1);
  });
});
