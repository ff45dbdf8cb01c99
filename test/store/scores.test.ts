// Scores on both engines: stored as given, read back by trace oldest first, each project's own,
// and every score kept when two instances add them to one trace at once.
import { expect, it } from "vitest";
import type { NewScore } from "../../src/server/store/scores.js";
import { eachEngine } from "./engines.js";
import { newProjectId } from "./record-fixtures.js";

const traceHex = "0af7651916cd43dd8448eb211c80319c";

function score(overrides: Partial<NewScore> = {}): NewScore {
  return {
    traceHex,
    spanId: null,
    name: "correctness",
    value: 0.75,
    label: "mostly right",
    reason: "one figure is off",
    source: "scorer",
    scoredBy: "scorer:correctness",
    ...overrides,
  };
}

eachEngine("scores", (engine) => {
  it("stores a score as given and reads a trace's scores oldest first", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const first = await store.scores.add(id, score());
    expect(first).toEqual({
      score_id: expect.stringMatching(/^sc_[0-9a-f]{24}$/),
      trace_id: `tr_${traceHex}`,
      span_id: null,
      name: "correctness",
      value: 0.75,
      label: "mostly right",
      reason: "one figure is off",
      source: "scorer",
      scored_by: "scorer:correctness",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const given = await store.scores.add(
      id,
      score({
        spanId: "00f067aa0ba902b7",
        name: "helpfulness",
        value: 1,
        label: null,
        reason: null,
        source: "human",
        scoredBy: "key_abc (cairn_abcd…)",
      }),
    );
    const undecided = await store.scores.add(
      id,
      score({ value: null, source: "judge", scoredBy: "judge:gpt-4o" }),
    );
    const tiny = await store.scores.add(id, score({ value: 0.1 + 0.2 }));
    expect(tiny.value).toBe(0.1 + 0.2);
    expect(await store.scores.forTrace(id, traceHex)).toEqual([first, given, undecided, tiny]);
    expect(await store.scores.forTrace(id, "ffffffffffffffffffffffffffffffff")).toEqual([]);
  });

  it("lists scores added within one millisecond in the order they were added", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const added = [];
    for (let index = 0; index < 20; index++) {
      added.push(await store.scores.add(id, score({ name: `scorer-${index}` })));
    }
    expect(await store.scores.forTrace(id, traceHex)).toEqual(added);
  });

  it("keeps each project's scores to itself, for the same trace id", async (context) => {
    const store = await engine.open(context);
    const mine = await newProjectId(store);
    const theirs = await newProjectId(store);
    const kept = await store.scores.add(mine, score());
    expect(await store.scores.forTrace(theirs, traceHex)).toEqual([]);
    const other = await store.scores.add(theirs, score({ name: "theirs" }));
    expect(await store.scores.forTrace(mine, traceHex)).toEqual([kept]);
    expect(await store.scores.forTrace(theirs, traceHex)).toEqual([other]);
  });

  it("answers what it stored for text PostgreSQL cannot hold as it is (NUL)", async (context) => {
    const store = await engine.open(context);
    const id = await newProjectId(store);
    const added = await store.scores.add(
      id,
      score({
        name: "n\u0000",
        label: "l\u0000",
        reason: "r\u0000",
        source: "human",
        scoredBy: "k\u0000",
      }),
    );
    expect(await store.scores.forTrace(id, traceHex)).toEqual([added]);
  });

  it("keeps every score when two instances add them to one trace at once", async (context) => {
    const store = await engine.open(context);
    const other = await engine.openSecondClient();
    const id = await newProjectId(store);
    const added = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? store : other).scores.add(id, score({ name: `scorer-${index}` })),
      ),
    );
    const stored = await other.scores.forTrace(id, traceHex);
    expect(stored).toHaveLength(40);
    expect(new Set(stored.map((each) => each.score_id))).toEqual(
      new Set(added.map((each) => each.score_id)),
    );
  });
});
