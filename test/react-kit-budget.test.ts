// The React kit's bundle budgets (issue 13), checked on every `npm test` so that a regression
// fails CI: each component and the whole kit as an app's bundler ships them (esbuild, minified,
// gzipped, React external), the lazily loaded highlighter, and the stylesheet.
import { describe, expect, it } from "vitest";
import {
  type KitEntry,
  kB,
  kitBudgets,
  kitEntries,
  measureEntry,
  measureStyles,
} from "../scripts/kit-bundle.js";

describe("the React kit's bundle budgets (min+gzip, React external)", () => {
  for (const entry of Object.keys(kitEntries) as KitEntry[]) {
    it(`${entry}: what a page loads first is within ${kB(kitBudgets[entry])}`, async () => {
      const { initial } = await measureEntry(entry);
      expect(initial, `${entry} is ${kB(initial)}`).toBeLessThanOrEqual(kitBudgets[entry]);
    });
  }

  it("loads the code highlighter and the tracing SDK only when they are used", async () => {
    const { lazy, initialOwners } = await measureEntry("kit");
    expect([...initialOwners]).not.toContain("highlight.js");
    expect([...initialOwners].filter((owner) => owner.startsWith("@opentelemetry"))).toEqual([]);
    expect([...initialOwners]).not.toContain("tracing/runtime");
    const highlighter = lazy.filter((chunk) => chunk.name === "highlight.js");
    const highlighterBytes = highlighter.reduce((sum, chunk) => sum + chunk.bytes, 0);
    expect(highlighterBytes, `the highlighter is ${kB(highlighterBytes)}`).toBeLessThanOrEqual(
      kitBudgets.highlighter,
    );
  });

  it(`the stylesheet is within ${kB(kitBudgets.css)}`, async () => {
    const css = await measureStyles();
    expect(css, `styles.css is ${kB(css)}`).toBeLessThanOrEqual(kitBudgets.css);
  });
});
