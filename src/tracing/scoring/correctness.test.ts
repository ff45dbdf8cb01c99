import { describe, expect, it } from "vitest";
import { fakeJudge } from "../../../test/helpers/fake-judge.js";
import { ConfigurationError, JudgeError } from "../../core/errors/index.js";
import { correctness, createCorrectness } from "./correctness.js";
import type { JudgeGrader, ScoreResult } from "./types.js";

const score = (output: string, expected: string | undefined) =>
  correctness({ output, expected }, {}) as ScoreResult;

describe("correctness without a judge", () => {
  it("needs an expected output", () => {
    const result = score("Paris", undefined);
    expect(result.score).toBeNull();
    expect(result.reason).toMatch(/expected output/);
    expect(score("Paris", "  ").score).toBeNull();
  });

  describe("passes", () => {
    it("an exact match, ignoring case, punctuation, articles and accents", () => {
      expect(score("The Eiffel Tower.", "eiffel tower")).toMatchObject({
        score: 1,
        label: "exact",
      });
      expect(score("Crème brûlée", "creme brulee")).toMatchObject({ score: 1, label: "exact" });
    });

    it("the expected number inside a sentence, written another way", () => {
      expect(score("The total is $1,234.50", "$1,234.50")).toMatchObject({
        score: 1,
        label: "numeric",
      });
      expect(score("It comes to 1234.5 dollars, shipping included.", "1,234.50 USD")).toMatchObject(
        { score: 1, label: "numeric" },
      );
      expect(score("You get a 15% discount.", "0.15")).toMatchObject({
        score: 1,
        label: "numeric",
      });
      expect(score("It takes three days.", "3 days")).toMatchObject({ score: 1, label: "numeric" });
      expect(score("The refund arrives in 5 business days.", "5 days")).toMatchObject({
        score: 1,
        label: "numeric",
      });
    });

    it("an answer embedded in a longer sentence, with at least 0.8", () => {
      const result = score("The capital of France is Paris, on the Seine.", "Paris");
      expect(result.label).toBe("contains");
      expect(result.score).toBe(0.8);
      expect(result.reason).toContain('"Paris"');
    });
  });

  describe("fails", () => {
    it("a wrong number, naming both", () => {
      const result = score("The total is $1,243.50", "$1,234.50");
      expect(result).toMatchObject({ score: 0, label: "incorrect" });
      expect(result.reason).toContain("1,234.50");
      expect(result.reason).toContain("1,243.50");
    });

    it("a wrong year among other numbers", () => {
      expect(score("Apollo 11 landed in 1968.", "1969")).toMatchObject({
        score: 0,
        label: "incorrect",
      });
    });

    it("the right number with the wrong unit, which only gets word-overlap credit", () => {
      const result = score("Refunds take 3 weeks.", "3 days");
      expect(result.label).toBe("partial");
      expect(result.score).toBeLessThan(0.5);
    });

    it("an unrelated answer", () => {
      expect(score("Berlin", "Paris")).toMatchObject({ score: 0, label: "incorrect" });
      expect(score("", "Paris")).toMatchObject({ score: 0, label: "incorrect" });
    });
  });

  it("gives partial credit by token F1 and names the missing words", () => {
    const result = score(
      "You can get a refund within 30 days",
      "Refunds are available within 30 days of purchase",
    );
    expect(result.label).toBe("partial");
    // 3 shared words ("within", "30", "days"): precision 3/7, recall 3/8.
    expect(result.score).toBeCloseTo(0.4, 5);
    expect(result.reason).toContain('"purchase"');
  });

  it("scores the same words in another order as 1, labelled reordered", () => {
    expect(score("France, Paris", "Paris, France")).toMatchObject({ score: 1, label: "reordered" });
  });

  it("takes a looser tolerance from createCorrectness", () => {
    const lenient = createCorrectness({ tolerance: 0.01 });
    expect(lenient({ output: "About 99.5 km", expected: "100 km" }, {})).toMatchObject({
      score: 1,
      label: "numeric",
    });
    expect(score("About 99.5 km", "100 km")).toMatchObject({ score: 0, label: "incorrect" });
    expect(() => createCorrectness({ tolerance: -1 })).toThrow(ConfigurationError);
  });
});

describe("correctness with a judge", () => {
  it("asks the judge with the output and the expected answer, and returns its verdict", async () => {
    const { judge, requests } = fakeJudge({
      score: 0.5,
      label: "partial",
      reason: "misses the fee",
    });
    const result = await correctness(
      { input: "How long do refunds take?", output: "About a week.", expected: "5 business days" },
      { judge },
    );
    expect(result).toEqual({ score: 0.5, label: "partial", reason: "misses the fee" });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      name: "correctness",
      input: "How long do refunds take?",
      output: "About a week.",
      expected: "5 business days",
    });
    expect(requests[0]?.rubric).toMatch(/EXPECTED/);
    expect(requests[0]?.rubric).toMatch(/0\.5/);
  });

  it("does not ask without an expected answer", async () => {
    const { judge, requests } = fakeJudge({ score: 1, reason: "ok" });
    expect(await correctness({ output: "Paris" }, { judge })).toMatchObject({ score: null });
    expect(requests).toHaveLength(0);
  });

  it("lets a JudgeError through", async () => {
    const judge: JudgeGrader = {
      model: "fake-judge",
      grade: () => Promise.reject(new JudgeError("judge returned 401", { retryable: false })),
    };
    await expect(
      Promise.resolve(correctness({ output: "Paris", expected: "Paris" }, { judge })),
    ).rejects.toThrow(JudgeError);
  });
});
