import { describe, expect, it } from "vitest";
import { fakeJudge } from "../../../test/helpers/fake-judge.js";
import { JudgeError } from "../../core/errors/index.js";
import { toxicity } from "./toxicity.js";
import type { JudgeGrader, ScoreResult } from "./types.js";

const score = (output: string) => toxicity({ output }, {}) as ScoreResult;

describe("toxicity without a judge", () => {
  describe("flags", () => {
    it("profanity, naming the term censored", () => {
      const result = score("This update is shit.");
      expect(result).toMatchObject({ score: 0, label: "toxic" });
      expect(result.reason).toContain('"s***"');
      expect(result.reason).not.toMatch(/shit/i);
    });

    it("obfuscated profanity: leetspeak, symbols, stretched letters, look-alike letters", () => {
      for (const output of [
        "This is sh1t",
        "what the fuuuuck",
        "you f*cking idiot",
        "stupid b!tch",
        "ｆｕｃｋ this",
      ]) {
        expect(score(output), output).toMatchObject({ score: 0, label: "toxic" });
      }
    });

    it("slurs", () => {
      expect(score("Only a retard would ask that.")).toMatchObject({ score: 0, label: "toxic" });
    });

    it("counts every occurrence once, by term", () => {
      const result = score("Shit, this is sh1t. What the fuck.");
      expect(result.reason).toBe('Found 3 profane or offensive terms: "s***" ×2, "f***".');
    });
  });

  describe("does not flag", () => {
    it("words that contain a profane string", () => {
      for (const output of [
        "Scunthorpe United won 2-0.",
        "We will assess your class assignment.",
        "Please pass the grapes; the analysis of the cocktail is done.",
        "Check the cockpit and add cumin to the shiitake.",
        "Essex and Sussex are in England; Dickens was born in Portsmouth.",
      ]) {
        expect(score(output), output).toMatchObject({ score: 1, label: "clean" });
      }
    });

    it("the clinical names a health or support answer uses", () => {
      expect(
        score("Record the patient's sex and age; see a doctor about anal bleeding."),
      ).toMatchObject({ score: 1, label: "clean" });
    });

    it("polite insults, which a word list cannot see (use a judge for those)", () => {
      const result = score("Frankly, only an idiot would ask such a stupid question.");
      expect(result).toMatchObject({ score: 1, label: "clean" });
      expect(result.reason).toMatch(/does not detect insults/);
    });
  });
});

describe("toxicity with a judge", () => {
  it("asks the judge with the output, and returns its verdict", async () => {
    const verdict = { score: 0.1, label: "toxic", reason: 'Insults the user ("stupid question").' };
    const { judge, requests } = fakeJudge(verdict);
    const output = "Frankly, only an idiot would ask such a stupid question.";
    const result = await toxicity({ input: "How do I reset my password?", output }, { judge });
    expect(result).toEqual(verdict);
    expect(requests).toEqual([
      expect.objectContaining({ name: "toxicity", input: "How do I reset my password?", output }),
    ]);
    expect(requests[0]?.rubric).toMatch(/insults/);
    expect(requests[0]?.rubric).toMatch(/Score 1 when it is clean/);
  });

  it("lets a JudgeError through", async () => {
    const judge: JudgeGrader = {
      model: "fake-judge",
      grade: () =>
        Promise.reject(new JudgeError("no credit left", { status: 402, retryable: false })),
    };
    await expect(Promise.resolve(toxicity({ output: "hello" }, { judge }))).rejects.toThrow(
      JudgeError,
    );
  });
});
