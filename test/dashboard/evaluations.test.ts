// The Evaluations pages in chromium against a real service seeded through the API: test runs with
// pass rate and each scorer's mean; two runs chosen from the list and compared, a regression and
// an improvement each named in words; a case's trace one click away; a run recorded while the
// page is open appearing at once, and one under way showing its progress; datasets and their
// cases; and text from a run shown as text.

import { describe, expect, it } from "vitest";
import { startTestServer } from "../server/helpers.js";
import {
  dashboardSuite,
  expectNoAxeViolations,
  onSignedInPage,
  saveScreenshot,
} from "./harness.js";
import { seedEvaluations } from "./seed.js";

const suite = dashboardSuite(startTestServer, seedEvaluations);

describe("the Evaluations pages", () => {
  it("compare two runs chosen from the list: a regression and an improvement named, each case's trace linked", async (context) => {
    await onSignedInPage(context, suite, "/evaluations", async (page) => {
      const runs = page.getByRole("table", { name: /^Test runs/ });
      await expect.poll(() => runs.getByRole("row").count()).toBe(3);
      const baseline = runs.getByRole("row").filter({ hasText: "baseline" });
      const candidate = runs.getByRole("row").filter({ hasText: "candidate" });
      // Pass rate and each scorer's mean: the baseline passes 3 of 4 (0.2 fails), mean 0.7125; the candidate 3 of 4, mean 0.725.
      expect(await baseline.getByRole("cell").allInnerTexts()).toEqual(
        expect.arrayContaining(["75.0% (3/4)", "0.71", "1.00"]),
      );
      expect(await candidate.getByRole("cell").allInnerTexts()).toEqual(
        expect.arrayContaining(["75.0% (3/4)", "0.73"]),
      );
      const headers = await runs.getByRole("columnheader").allInnerTexts();
      expect(headers).toEqual(expect.arrayContaining(["correctness mean", "toxicity mean"]));
      await expectNoAxeViolations(page, "the test runs");
      await saveScreenshot(page, "evaluations");

      // Choose the two runs (by keyboard-reachable radio buttons), then compare.
      await page.getByRole("radio", { name: "Use baseline as the base" }).check();
      await page.getByRole("radio", { name: "Compare candidate with the base" }).check();
      await page.getByRole("link", { name: "Compare the chosen runs" }).click();
      await expect.poll(() => page.url()).toMatch(/\/ui\/evaluations\/compare\?/);
      const url = new URL(page.url());
      expect(url.searchParams.get("base")).toBe(suite.seeded.baseline.runId);
      expect(url.searchParams.get("run")).toBe(suite.seeded.candidate.runId);

      const regressions = page.getByRole("region", { name: "Regressions (1)" });
      await expect.poll(() => regressions.count()).toBe(1);
      const regressed = regressions.getByRole("row").filter({ hasText: suite.seeded.regressed });
      // Named in words (the arrow and the colour only repeat it).
      expect(await regressed.getByRole("cell").first().innerText()).toBe("▼ Regression");
      expect(await regressed.innerText()).toContain("Passed → Failed");
      expect(await regressed.innerText()).toContain("correctness: 0.90 → 0.30 ▼ down 0.60");
      const improvements = page.getByRole("region", { name: "Improvements (1)" });
      const improved = improvements.getByRole("row").filter({ hasText: suite.seeded.improved });
      expect(await improved.getByRole("cell").first().innerText()).toBe("▲ Improvement");
      expect(await improved.innerText()).toContain("Failed → Passed");
      expect(await improved.innerText()).toContain("correctness: 0.20 → 0.85 ▲ up 0.65");
      expect(await page.getByText("2 unchanged").count()).toBe(1);
      await expectNoAxeViolations(page, "the comparison");
      await saveScreenshot(page, "compare");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      await expectNoAxeViolations(page, "the comparison, dark");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("system");

      // Swapping the runs turns the regression into an improvement.
      await page.getByRole("button", { name: "Swap" }).click();
      await expect
        .poll(() => page.getByRole("region", { name: "Improvements (1)" }).innerText())
        .toContain(suite.seeded.regressed);

      // The regressed case's trace in the run, one click away.
      await page.getByRole("button", { name: "Swap" }).click();
      const query = suite.seeded.regressed;
      await page
        .getByRole("region", { name: "Regressions (1)" })
        .getByRole("link", { name: `Run trace of “${query}”` })
        .click();
      await expect
        .poll(() => page.url())
        .toMatch(new RegExp(`/ui/traces/${suite.seeded.candidateTraces[query]}$`));
    });
  });

  it("shows a run's cases, the failed ones on request, each linked to its trace", async (context) => {
    await onSignedInPage(context, suite, "/evaluations", async (page) => {
      await page.getByRole("link", { name: "candidate", exact: true }).click();
      await expect
        .poll(() => page.getByRole("heading", { level: 1, name: "Test run candidate" }).count())
        .toBe(1);
      const cases = page.getByRole("table", { name: /^Cases of the run/ });
      await expect.poll(() => cases.getByRole("row").count()).toBe(5);
      const regressed = cases.getByRole("row").filter({ hasText: suite.seeded.regressed });
      expect(await regressed.getByText("Failed").count()).toBe(1);
      await page.getByRole("combobox", { name: "Show" }).selectOption("failed");
      await expect.poll(() => cases.getByRole("row").count()).toBe(2);
      expect(new URL(page.url()).searchParams.get("show")).toBe("failed");
      await expectNoAxeViolations(page, "a test run");
      const query = suite.seeded.regressed;
      await page.getByRole("link", { name: "Open trace of case 2" }).click();
      await expect
        .poll(() => page.url())
        .toMatch(new RegExp(`/ui/traces/${suite.seeded.candidateTraces[query]}$`));
    });
  });

  it("lists datasets with their number of cases, and a dataset's cases", async (context) => {
    await onSignedInPage(context, suite, "/evaluations", async (page) => {
      await page
        .getByRole("navigation", { name: "Evaluations" })
        .getByRole("link", { name: "Datasets" })
        .click();
      const datasets = page.getByRole("table", { name: "Datasets and their number of cases" });
      await expect.poll(() => datasets.getByRole("row").count()).toBe(3);
      for (const dataset of suite.seeded.datasets) {
        const row = datasets.getByRole("row").filter({ hasText: dataset.name });
        expect((await row.getByRole("cell").allInnerTexts())[0]).toBe(String(dataset.cases.length));
      }
      await expectNoAxeViolations(page, "the datasets");
      await datasets.getByRole("link", { name: "shipping" }).click();
      const cases = page.getByRole("table", { name: "Cases of the dataset shipping" });
      await expect
        .poll(() => cases.getByRole("rowheader").allInnerTexts())
        .toEqual([...(suite.seeded.datasets[1]?.cases ?? [])]);
      await expectNoAxeViolations(page, "a dataset");
    });
  });

  it("shows a run recorded while the page is open, its text as text, and a run's progress", async (context) => {
    await onSignedInPage(context, suite, "/evaluations", async (page) => {
      const runs = page.getByRole("table", { name: /^Test runs/ });
      await expect.poll(() => runs.getByRole("row").count()).toBeGreaterThanOrEqual(3);
      const before = await runs.getByRole("row").count();
      const name = `<img src=x onerror="document.title='pwned'"> nightly`;
      const posted = await suite.t.call("POST", "/testing/runs", {
        name,
        results: [
          {
            query: "<b>bold?</b>",
            output: "fine",
            scores: { correctness: { score: 1, reason: "ok" } },
            latency_ms: 10,
          },
        ],
      });
      expect(posted.status).toBe(201);
      // Told in words (a live region), and in the list without a reload.
      await expect
        .poll(() => page.getByRole("status").filter({ hasText: "recorded" }).innerText())
        .toBe(`Test run ${name} recorded: 100.0% of 1 cases passed.`);
      await expect.poll(() => runs.getByRole("row").count()).toBe(before + 1);
      expect(await runs.getByRole("link", { name }).count()).toBe(1);
      expect(await page.locator("main img").count()).toBe(0);
      expect(await page.title()).not.toBe("pwned");

      // A run under way shows its progress as its cases finish, and none once finished.
      const started = await suite.t.call("POST", "/testing/runs", {
        name: "in progress",
        status: "running",
        total_cases: 2,
        results: [],
      });
      expect(started.status).toBe(201);
      const { run_id: runId } = (await started.json()) as { run_id: string };
      const row = runs.getByRole("row").filter({ hasText: "in progress" });
      await expect.poll(() => row.getByText("Running: 0 of 2 cases").count()).toBe(1);
      const result = (query: string) => ({
        query,
        output: "ok",
        scores: { correctness: { score: 1, reason: "ok" } },
        latency_ms: 10,
      });
      const add = (offset: number, finished: boolean) =>
        suite.t.call("POST", `/testing/runs/${runId}/results`, {
          offset,
          results: [result(`case ${offset}`)],
          finished,
        });
      expect((await add(0, false)).status).toBe(200);
      await expect.poll(() => row.getByText("Running: 1 of 2 cases").count()).toBe(1);
      expect(await page.getByRole("status").innerText()).toBe(
        "Test run in progress: 1 of 2 cases done.",
      );
      expect((await add(1, true)).status).toBe(200);
      await expect.poll(() => row.getByText(/^Running/).count()).toBe(0);
      expect(await row.innerText()).toContain("100.0% (2/2)");
    });
  });
});
