// axe-core on a page in chromium, for the browser tests of the dashboard and the example app.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { expect } from "vitest";

const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Runs axe on the page as it is; any violation fails the test, each named with its nodes. */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  if (!(await page.evaluate(() => "axe" in window))) {
    // Evaluated as the test's own script: a Content-Security-Policy (the dashboard's) refuses an
    // inline <script> (addScriptTag), as it would any script a page did not load itself.
    await page.evaluate(await axeSource);
  }
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<unknown> } })
      .axe;
    const result = (await axe.run(document)) as {
      violations: { id: string; help: string; nodes: { target: unknown[] }[] }[];
    };
    return result.violations.map(
      (violation) =>
        `${violation.id} (${violation.help}): ${violation.nodes
          .slice(0, 5)
          .map((node) => JSON.stringify(node.target))
          .join(", ")}`,
    );
  });
  expect(violations, `axe violations on ${label}`).toEqual([]);
}
