import { describe, expect, it } from "vitest";
import { fakeJudge } from "../../../test/helpers/fake-judge.js";
import { ConfigurationError, JudgeError } from "../../core/errors/index.js";
import { createFaithfulness, faithfulness } from "./faithfulness.js";
import type { JudgeGrader, ScoreResult } from "./types.js";

const refundPolicy = [
  "Refund policy. Customers can request a full refund within 30 days of purchase. Refunds are issued to the original payment method. This usually takes 5 business days. Items must be unused and in their original packaging. Shipping fees are non-refundable.",
  "Store hours: our stores open at 9 a.m. and close at 6 p.m., Monday to Saturday.",
];

const score = (output: string, context: readonly string[] = refundPolicy) =>
  faithfulness({ output, context }, {}) as ScoreResult;

describe("faithfulness without a judge", () => {
  it("needs documents, and says which", () => {
    for (const context of [undefined, [], ["", "  "]]) {
      const result = faithfulness({ output: "Refunds take 5 days.", context }, {}) as ScoreResult;
      expect(result.score).toBeNull();
      expect(result.reason).toMatch(/retrieval spans/);
      expect(result.reason).toMatch(/context/);
    }
  });

  describe("passes", () => {
    it("an answer that restates the policy in other inflections", () => {
      const result = score(
        "Sure! Based on the documents, here is what I found:\nYou can get a full refund within 30 days of your purchase. The money is refunded to your original payment method. Shipping fees are not refundable. Hope this helps!",
      );
      expect(result).toMatchObject({ score: 1, label: "faithful" });
      expect(result.reason).toBe("The documents support 3 of 3 sentences that make a claim.");
    });

    it("a claim that joins two neighbouring sentences of a document", () => {
      expect(
        score("Refunds are issued to the original payment method within 5 business days."),
      ).toMatchObject({ score: 1, label: "faithful" });
    });

    it("claims from different documents", () => {
      expect(
        score("Stores open at 9 a.m. Monday to Saturday.\nItems must be unused."),
      ).toMatchObject({ score: 1, label: "faithful" });
    });
  });

  describe("fails", () => {
    it("a hallucinated sentence, quoted in the reason", () => {
      const result = score(
        "You can get a full refund within 30 days of purchase. We also offer free lifetime repairs on all items.",
      );
      expect(result).toMatchObject({ score: 0.5, label: "partially_faithful" });
      expect(result.reason).toContain('"We also offer free lifetime repairs on all items."');
      expect(result.reason).not.toContain("full refund");
    });

    it("a claim with a number the documents do not state", () => {
      const result = score("You have 60 days to request a full refund of your purchase.");
      expect(result).toMatchObject({ score: 0, label: "unfaithful" });
      expect(result.reason).toContain("60 days");
      expect(score("The refund usually takes six business days.").label).toBe("unfaithful");
      expect(score("The refund usually takes five business days.").label).toBe("faithful");
    });

    it("a claim whose words are scattered across distant parts of a document", () => {
      // "refund", "packaging", "purchase" all occur, but not within one sentence window.
      const result = score("Refund policy packaging fees apply on purchase.", [
        "Refund policy. Customers can ask within 30 days of purchase. Our team is friendly. Gift cards are welcome. Items need their original packaging. Delivery fees apply.",
      ]);
      expect(result.label).toBe("unfaithful");
    });

    it("an answer about something else entirely", () => {
      const result = score("Our store is open on Sundays. Gift cards never expire.");
      expect(result).toMatchObject({ score: 0, label: "unfaithful" });
      expect(result.reason).toContain('"Our store is open on Sundays."');
      expect(result.reason).toContain('"Gift cards never expire."');
    });

    it("names at most five unsupported sentences, then how many more", () => {
      const inventedClaims = [
        "Gift cards never expire.",
        "Loyalty members earn double points.",
        "Students get a discount.",
        "Repairs are free for life.",
        "Pets are welcome in every store.",
        "Parking is free downtown.",
        "Delivery drones arrive hourly.",
      ];
      const result = score(inventedClaims.join(" "));
      expect(result.score).toBe(0);
      expect(result.reason).toContain('"Pets are welcome in every store."');
      expect(result.reason).not.toContain("Parking");
      expect(result.reason).toMatch(/and 2 more\.$/);
    });
  });

  it("truncates a long unsupported sentence in the reason", () => {
    const long = `Our premium warranty ${"covers accidental damage, theft, loss and water ingress ".repeat(5)}worldwide.`;
    const result = score(long);
    expect(result.reason).toContain("…");
    expect(result.reason.length).toBeLessThan(220);
  });

  it("is null when the output claims nothing", () => {
    expect(score("Sure! Let me know if you have any other questions.").score).toBeNull();
    expect(score("I'm sorry, I don't know.").score).toBeNull();
  });

  it("needs a negation in the documents to support a negated claim", () => {
    expect(score("Please note: shipping fees are not refundable.").label).toBe("faithful");
    expect(score("Refunds are not issued to the original payment method.").label).toBe(
      "unfaithful",
    );
  });

  it("takes a stricter coverage threshold from createFaithfulness", () => {
    const output = "Refunds go to the original payment method, usually by bank transfer.";
    expect(score(output).label).toBe("faithful");
    const strict = createFaithfulness({ coverageThreshold: 1 });
    expect(strict({ output, context: refundPolicy }, {})).toMatchObject({ label: "unfaithful" });
    expect(() => createFaithfulness({ coverageThreshold: 0 })).toThrow(ConfigurationError);
  });
});

describe("faithfulness with a judge", () => {
  it("asks the judge with the output and the documents, and returns its verdict", async () => {
    const verdict = {
      score: 0.5,
      label: "partially_faithful",
      reason: 'Unsupported: "We also offer free lifetime repairs."',
    };
    const { judge, requests } = fakeJudge(verdict);
    const output = "Refunds take 5 business days. We also offer free lifetime repairs.";
    const result = await faithfulness(
      { input: "How do refunds work?", output, context: [...refundPolicy, ""] },
      { judge },
    );
    expect(result).toEqual(verdict);
    expect(requests).toEqual([
      expect.objectContaining({
        name: "faithfulness",
        input: "How do refunds work?",
        output,
        context: refundPolicy,
      }),
    ]);
    expect(requests[0]?.rubric).toMatch(/claims/);
    expect(requests[0]?.rubric).toMatch(/quote every unsupported claim/);
  });

  it("does not ask without documents", async () => {
    const { judge, requests } = fakeJudge({ score: 1, reason: "ok" });
    expect(await faithfulness({ output: "Refunds take 5 days." }, { judge })).toMatchObject({
      score: null,
    });
    expect(requests).toHaveLength(0);
  });

  it("lets a JudgeError through", async () => {
    const judge: JudgeGrader = {
      model: "fake-judge",
      grade: () => Promise.reject(new JudgeError("judge unreachable", { retryable: true })),
    };
    await expect(
      Promise.resolve(
        faithfulness({ output: "Refunds take 5 days.", context: refundPolicy }, { judge }),
      ),
    ).rejects.toThrow(JudgeError);
  });
});
