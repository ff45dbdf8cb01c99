import { describe, expect, it } from "vitest";
import {
  answerTokens,
  contentStems,
  extractNumbers,
  foldUnicode,
  normaliseAnswer,
  quote,
  sameNumber,
  splitSentences,
  stem,
  words,
} from "./text.js";

describe("normaliseAnswer", () => {
  it("lowercases, strips punctuation and articles, and collapses whitespace", () => {
    expect(normaliseAnswer("  The   Eiffel Tower!  ")).toBe("eiffel tower");
    expect(normaliseAnswer("An apple, a day.")).toBe("apple day");
  });

  it("folds full-width letters and strips accents", () => {
    expect(normaliseAnswer("Crème Brûlée")).toBe("creme brulee");
    expect(normaliseAnswer("ＰＡＲＩＳ")).toBe("paris");
    expect(foldUnicode("Ｚürich ﬁnal")).toBe("Zurich final");
  });

  it("keeps numbers intact: thousands separators go, decimal points stay", () => {
    expect(normaliseAnswer("The total is $1,234.50.")).toBe("total is 1234.50");
    expect(normaliseAnswer("3.5")).not.toBe(normaliseAnswer("35"));
  });

  it("removes apostrophes and splits on other punctuation", () => {
    expect(normaliseAnswer("Don't refund/exchange")).toBe("dont refund exchange");
    expect(answerTokens("the refund-policy")).toEqual(["refund", "policy"]);
    expect(answerTokens("  ")).toEqual([]);
  });

  it("keeps words that merely start like an article", () => {
    expect(normaliseAnswer("Theater and answer")).toBe("theater and answer");
  });
});

describe("words", () => {
  it("splits on anything that is not a letter or a digit", () => {
    expect(words("It's the user’s café: 5 items")).toEqual([
      "its",
      "the",
      "users",
      "cafe",
      "5",
      "items",
    ]);
  });
});

describe("splitSentences", () => {
  it("does not end a sentence at an abbreviation or a decimal", () => {
    expect(
      splitSentences(
        "Refunds are available e.g. for damaged items. Dr. Smith approved it. The rate is 3.5 percent. Done!",
      ),
    ).toEqual([
      "Refunds are available e.g. for damaged items.",
      "Dr. Smith approved it.",
      "The rate is 3.5 percent.",
      "Done!",
    ]);
    expect(splitSentences("It was U.S. policy. Call at 5 p.m. tomorrow.")).toEqual([
      "It was U.S. policy.",
      "Call at 5 p.m. tomorrow.",
    ]);
  });

  it("treats line breaks and bullets as sentence breaks and drops list markers", () => {
    expect(
      splitSentences("Steps:\n1. Open settings\n2. Click Refunds\n- Confirm it\n* Done"),
    ).toEqual(["Steps:", "Open settings", "Click Refunds", "Confirm it", "Done"]);
    expect(splitSentences("Free returns • Full refunds • No fees")).toEqual([
      "Free returns",
      "Full refunds",
      "No fees",
    ]);
  });

  it("splits a full stop with the space missing after it", () => {
    expect(splitSentences("Refunds take 5 days.Items must be unused")).toEqual([
      "Refunds take 5 days.",
      "Items must be unused",
    ]);
  });

  it("returns nothing for blank text", () => {
    expect(splitSentences(" \n\n ")).toEqual([]);
  });
});

describe("extractNumbers", () => {
  const values = (text: string) => extractNumbers(text).map((number) => number.value);

  it("reads thousands separators, decimals and currency amounts", () => {
    expect(extractNumbers("The total is $1,234.50")).toEqual([
      { value: 1234.5, percent: false, text: "1,234.50" },
    ]);
    expect(values("between 12 and 0.75 or .5")).toEqual([12, 0.75, 0.5]);
  });

  it("reads negative numbers but not ranges", () => {
    expect(values("from -3 to −4.5")).toEqual([-3, -4.5]);
    expect(values("pages 3-5")).toEqual([3, 5]);
  });

  it("reads percentages and scale words", () => {
    expect(extractNumbers("15% off, or 20 percent")).toEqual([
      { value: 15, percent: true, text: "15%" },
      { value: 20, percent: true, text: "20 percent" },
    ]);
    expect(values("revenue of $1.2 million")).toEqual([1_200_000]);
  });

  it("reads number words from two to ninety-nine, but not the pronoun one", () => {
    expect(values("Refunds take five business days, or twenty-five at most.")).toEqual([5, 25]);
    expect(values("Seventeen items; the one I ordered")).toEqual([17]);
    expect(values("often a tent")).toEqual([]);
  });

  it("ignores digits inside words and version tails", () => {
    expect(values("B2B mp3 files")).toEqual([]);
    expect(values("version 2.0.1")).toEqual([2]);
  });

  it("compares numbers within a tolerance, and a percentage with its fraction", () => {
    const [percent, fraction, other] = extractNumbers("15% 0.15 0.16");
    if (percent === undefined || fraction === undefined || other === undefined) {
      throw new Error("expected three numbers");
    }
    expect(sameNumber(percent, fraction)).toBe(true);
    expect(sameNumber(fraction, other)).toBe(false);
    const [a, b] = extractNumbers("1234.5 1234.5000001");
    if (a === undefined || b === undefined) throw new Error("expected two numbers");
    expect(sameNumber(a, b)).toBe(true);
  });
});

describe("stem", () => {
  it("gives inflected forms of a word the same stem", () => {
    for (const group of [
      ["refund", "refunds", "refunded", "refunding"],
      ["charge", "charges", "charged", "charging"],
      ["ship", "ships", "shipped", "shipping"],
      ["policy", "policies"],
      ["apply", "applied", "applies"],
      ["use", "used", "using"],
      ["process", "processes", "processed", "processing"],
      ["bill", "billed"],
      ["add", "added"],
    ]) {
      expect(new Set(group.map(stem)), group.join(", ")).toHaveProperty("size", 1);
    }
  });

  it("leaves words that only look inflected alone", () => {
    expect(stem("class")).toBe("class");
    expect(stem("status")).toBe("status");
    expect(stem("analysis")).toBe("analysis");
    expect(stem("thing")).toBe("thing");
    expect(stem("need")).toBe("need");
  });
});

describe("contentStems", () => {
  it("drops stop words, single letters, numbers and number words", () => {
    expect(contentStems("twelve items cost 40 dollars")).toEqual(["item", "cost", "dollar"]);
    expect(contentStems("Refunds are processed within 5 business days, via e-mail.")).toEqual([
      "refund",
      "process",
      "business",
      "day",
      "via",
      "mail",
    ]);
  });

  it("keeps negations, which change a claim", () => {
    expect(contentStems("Refunds are not available")).toContain("not");
  });
});

describe("quote", () => {
  it("quotes short text whole and cuts long text at a word", () => {
    expect(quote("Hello   world")).toBe('"Hello world"');
    const long = `${"word ".repeat(40)}end`;
    const quoted = quote(long);
    expect(quoted.length).toBeLessThanOrEqual(123);
    expect(quoted.endsWith('word…"')).toBe(true);
  });
});
