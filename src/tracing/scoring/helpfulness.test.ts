import { describe, expect, it } from "vitest";
import { fakeJudge } from "../../../test/helpers/fake-judge.js";
import { ConfigurationError, JudgeError } from "../../core/errors/index.js";
import { builtinScorerDescriptions, builtinScorers } from "./builtin-scorers.js";
import { helpfulness } from "./helpfulness.js";
import type { JudgeGrader } from "./types.js";

describe("helpfulness", () => {
  it("throws a ConfigurationError that says how to configure a judge, without one", () => {
    const call = () => helpfulness({ input: "How do I get a refund?", output: "Ask us." }, {});
    expect(call).toThrow(ConfigurationError);
    expect(call).toThrow(
      'the helpfulness scorer needs an LLM judge: ask for "helpfulness:judge", with a judge configured (configure({ judge: { baseURL, apiKey, model } }) in the SDK, CAIRN_JUDGE_BASE_URL, CAIRN_JUDGE_API_KEY and CAIRN_JUDGE_MODEL for the SDK or the service)',
    );
  });

  it("passes a helpful answer the judge rates 1", async () => {
    const { judge, requests } = fakeJudge({ score: 1, reason: "Answers with the steps." });
    const input = "How do I get a refund?";
    const output = "Open Orders, pick the order and click Request refund; it arrives in 5 days.";
    expect(await helpfulness({ input, output }, { judge })).toEqual({
      score: 1,
      reason: "Answers with the steps.",
    });
    expect(requests).toEqual([expect.objectContaining({ name: "helpfulness", input, output })]);
    expect(requests[0]?.rubric).toMatch(/complete/);
    expect(requests[0]?.rubric).toMatch(/concise/);
  });

  it("fails an evasive answer the judge rates 0", async () => {
    const { judge } = fakeJudge({ score: 0, label: "unhelpful", reason: "Does not answer." });
    expect(
      await helpfulness({ input: "How do I get a refund?", output: "Ask us." }, { judge }),
    ).toMatchObject({ score: 0 });
  });

  it("lets a JudgeError through", async () => {
    const judge: JudgeGrader = {
      model: "fake-judge",
      grade: () => Promise.reject(new JudgeError("judge returned 500", { retryable: true })),
    };
    await expect(Promise.resolve(helpfulness({ output: "hi" }, { judge }))).rejects.toThrow(
      JudgeError,
    );
  });
});

describe("builtinScorers", () => {
  it("lists the four built-in scorers with a one-line description each", () => {
    expect(Object.keys(builtinScorers).sort()).toEqual([
      "correctness",
      "faithfulness",
      "helpfulness",
      "toxicity",
    ]);
    expect(Object.keys(builtinScorerDescriptions).sort()).toEqual(
      Object.keys(builtinScorers).sort(),
    );
    for (const description of Object.values(builtinScorerDescriptions)) {
      expect(description).not.toMatch(/\n/);
    }
  });
});
