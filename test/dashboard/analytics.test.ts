// The Analytics page in chromium against a real service seeded with traces over five past days
// (two models, two versions, failures): the period's totals are the seeded figures; grouping by
// model (kept in the URL) draws both models and lists them in the legend and the breakdown; each
// chart's table has its numbers; the tooltip follows the mouse and the arrow keys; the lines are
// redrawn in the dark theme's colours; the charts follow the window's width; a period without
// spans, and a project without any, say so instead of drawing empty axes.

import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { type Chromium, needChromium } from "../helpers/browser.js";
import { resource, span, startTestServer, type TestServer } from "../server/helpers.js";
import {
  expectNoAxeViolations,
  launchForDashboard,
  openSignedIn,
  saveScreenshot,
} from "./harness.js";
import { analyticsModels, type SeededDays, seedDays } from "./seed-analytics.js";

const suite = {
  chromium: { reason: "not launched" } as Chromium,
  t: undefined as TestServer | undefined,
  empty: undefined as TestServer | undefined,
  recent: undefined as TestServer | undefined,
  seeded: undefined as SeededDays | undefined,
};

beforeAll(async () => {
  suite.chromium = await launchForDashboard();
  suite.t = await startTestServer();
  suite.empty = await startTestServer();
  suite.recent = await startTestServer();
  suite.seeded = await seedDays(suite.t);
}, 120_000);

afterAll(async () => {
  await suite.chromium.browser?.close();
  await suite.t?.stop();
  await suite.empty?.stop();
  await suite.recent?.stop();
});

/**
 * Opens `path` signed in to `t`'s project, runs `act` on the page, and expects no page errors;
 * the browser context is closed whatever happens.
 */
async function onPage(
  context: TestContext,
  t: TestServer,
  path: string,
  act: (page: Page, browserContext: BrowserContext) => Promise<void>,
): Promise<void> {
  needChromium(context, suite.chromium);
  const opened = await openSignedIn(suite.chromium.browser, t, path);
  try {
    await act(opened.page, opened.context);
    expect(opened.errors).toEqual([]);
  } finally {
    await opened.context.close();
  }
}

/** The figure shown under a name in the totals above the charts. */
async function figure(page: Page, name: string): Promise<string> {
  const item = page.locator(".analytics-figure", {
    has: page.getByRole("term").filter({ hasText: new RegExp(`^${name}$`) }),
  });
  return (await item.locator(".analytics-figure-value").innerText()).trim();
}

/** A UTC day as the page names it. */
function dayName(day: string): string {
  return new Intl.DateTimeFormat("en", {
    month: "short",
    day: "numeric",
    year: "numeric",
    timeZone: "UTC",
  }).format(Date.parse(`${day}T00:00:00Z`));
}

/** How many pixels of the chart's canvas are near the colour (r, g, b). */
function pixelsNear(page: Page, chart: string, rgb: readonly [number, number, number]) {
  return page.evaluate(
    ({ chart, rgb }) => {
      const slider = document.querySelector(`[role="slider"][aria-label^="${chart} by"]`);
      const canvas = slider?.querySelector("canvas");
      const context = canvas?.getContext("2d");
      if (canvas === null || canvas === undefined || context === null || context === undefined) {
        return -1;
      }
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      let near = 0;
      for (let i = 0; i < data.length; i += 4) {
        const distance =
          Math.abs((data[i] as number) - rgb[0]) +
          Math.abs((data[i + 1] as number) - rgb[1]) +
          Math.abs((data[i + 2] as number) - rgb[2]);
        if ((data[i + 3] as number) > 200 && distance < 24) near++;
      }
      return near;
    },
    { chart, rgb },
  );
}

// The theme's accent (the first line's colour), light and dark (src/components/theme.css).
const lightAccent = [0x0b, 0x5c, 0xd5] as const;
const darkAccent = [0x6e, 0xa8, 0xfe] as const;

describe("the Analytics page", () => {
  it("shows the seeded totals, both models by model, and each chart's numbers as a table", async (context) => {
    const seeded = suite.seeded as SeededDays;
    await onPage(context, suite.t as TestServer, "/analytics", async (page, browserContext) => {
      await page.getByRole("heading", { name: "Analytics", level: 1 }).waitFor();
      // The last 7 days by default: every seeded trace.
      await page.locator(".analytics-figure").first().waitFor();
      expect(await figure(page, "Traces")).toBe(String(seeded.traces));
      expect(await figure(page, "Error rate")).toBe("15.0%");
      expect(await page.getByText(`${seeded.errorSpans} of ${seeded.spans} spans`).count()).toBe(1);
      expect(await figure(page, "Tokens")).toBe("4,500");
      expect(await figure(page, "Cost")).toBe("$0.0450");
      expect(await figure(page, "Latency p50")).toBe(`${seeded.p50Ms} ms`);
      expect(await figure(page, "Latency p95")).toBe(`${seeded.p95Ms} ms`);
      for (const chart of ["Traces", "Errors", "Tokens", "Cost", "Latency"]) {
        await expect
          .poll(() => page.getByRole("slider", { name: new RegExp(`^${chart} by day`) }).count())
          .toBe(1);
      }
      await expect.poll(() => pixelsNear(page, "Traces", lightAccent)).toBeGreaterThan(20);
      await expectNoAxeViolations(page, "the analytics page, light");
      await saveScreenshot(page, "analytics");

      // Group by model: kept in the URL, both models in the legends and the breakdown table.
      await page.getByLabel("Group by").selectOption("model");
      await expect.poll(() => new URL(page.url()).searchParams.get("group")).toBe("model");
      const costLegend = page.getByRole("list", { name: "Cost legend" });
      for (const model of analyticsModels) {
        await costLegend.getByRole("listitem").filter({ hasText: model }).waitFor();
      }
      expect(await costLegend.innerText()).toContain("$0.0300");
      await saveScreenshot(page, "analytics-by-model");
      const breakdown = page.getByRole("table", { name: /^Every model of the period/ });
      for (const model of analyticsModels) {
        const row = breakdown.getByRole("row").filter({ hasText: model });
        const cells = await row.getByRole("cell").allInnerTexts();
        const expected = seeded.byModel[model];
        // Traces, spans, errors, error rate, tokens, cost, p50, p95, p99.
        expect(cells[1]).toBe(String(expected.spans));
        expect(cells[4]).toBe(expected.tokens.toLocaleString("en"));
        expect(cells[5]).toBe(`$${expected.costUsd.toFixed(4)}`);
      }

      // The tokens chart as a table: a row per day, a column per model and all together.
      await page.getByRole("button", { name: "Tokens as a table" }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get("tables")).toBe("tokens");
      const tokens = page
        .getByRole("region", { name: "Tokens table" })
        .getByRole("table", { name: "Tokens per day (UTC)" });
      await expect.poll(() => tokens.count()).toBe(1);
      const headers = await tokens.getByRole("columnheader").allInnerTexts();
      expect(headers).toEqual(expect.arrayContaining([...analyticsModels, "All"]));
      const lastDay = seeded.days[seeded.days.length - 1] as string;
      const dayRow = tokens.getByRole("row").filter({ hasText: dayName(lastDay) });
      const values = Object.fromEntries(
        (await dayRow.getByRole("cell").allInnerTexts()).map((value, index) => [
          headers[index + 1],
          value,
        ]),
      );
      expect(values).toMatchObject({
        "gpt-4o": String(seeded.byModel["gpt-4o"].tokensPerDay),
        "claude-3-5-haiku": String(seeded.byModel["claude-3-5-haiku"].tokensPerDay),
        All: "900",
      });
      expect(await page.getByRole("slider", { name: /^Tokens by day/ }).count()).toBe(0);
      await expectNoAxeViolations(page, "the analytics page by model, with a table");

      // The same view from its address, in a new page.
      const shared = await browserContext.newPage();
      await shared.goto(page.url());
      await shared.getByRole("region", { name: "Tokens table" }).waitFor();
      expect(await shared.getByLabel("Group by").inputValue()).toBe("model");
      await shared.close();
    });
  });

  it("shows a tooltip under the mouse and under the arrow keys, and redraws in the dark theme", async (context) => {
    const seeded = suite.seeded as SeededDays;
    await onPage(context, suite.t as TestServer, "/analytics?group=model", async (page) => {
      const cost = page.getByRole("slider", { name: /^Cost by day/ });
      await cost.waitFor();
      const tooltip = page.locator(".analytics-tooltip:visible");

      // By keyboard: Tab reaches the chart; the arrows move along the days, read out as the
      // slider's value and shown in the tooltip.
      await page.getByRole("button", { name: "Cost as a table" }).focus();
      await page.keyboard.press("Tab");
      expect(await cost.evaluate((element) => element === document.activeElement)).toBe(true);
      await page.keyboard.press("Home");
      // The 7-day period starts a day before the first seeded day: nothing then. The groups
      // come by span count (the roots have no model), then by name.
      const firstDay = dayName(seeded.days[0] as string);
      const dayBefore = dayName(
        new Date(Date.parse(`${seeded.days[0]}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10),
      );
      await expect
        .poll(() => cost.getAttribute("aria-valuetext"))
        .toBe(`${dayBefore}: (no model) $0, claude-3-5-haiku $0, gpt-4o $0`);
      await page.keyboard.press("ArrowRight");
      await expect
        .poll(() => cost.getAttribute("aria-valuetext"))
        .toBe(`${firstDay}: (no model) $0, claude-3-5-haiku $0.0060, gpt-4o $0.0030`);
      await expect.poll(() => tooltip.count()).toBe(1);
      expect(await tooltip.innerText()).toContain(firstDay);
      expect(await tooltip.innerText()).toContain("claude-3-5-haiku: $0.0060");
      await page.keyboard.press("Tab");
      await expect.poll(() => tooltip.count()).toBe(0);

      // By mouse: over the chart, the day under it.
      const box = await page.getByRole("slider", { name: /^Tokens by day/ }).boundingBox();
      if (box === null) throw new Error("the tokens chart has no box");
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 3);
      await expect.poll(() => tooltip.count()).toBe(1);
      expect(await tooltip.innerText()).toMatch(/gpt-4o: \d+/);
      await page.mouse.move(0, 0);

      // Dark: the lines are drawn again in the dark theme's colours.
      await page.getByLabel("Group by").selectOption("none");
      await page
        .getByRole("list", { name: "Traces legend" })
        .getByText("Traces", { exact: true })
        .waitFor();
      await expect.poll(() => pixelsNear(page, "Traces", lightAccent)).toBeGreaterThan(20);
      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      await expect.poll(() => pixelsNear(page, "Traces", darkAccent)).toBeGreaterThan(20);
      expect(await pixelsNear(page, "Traces", lightAccent)).toBe(0);
      await expectNoAxeViolations(page, "the analytics page, dark");
      await page.evaluate(() => window.scrollTo(0, 0));
      await saveScreenshot(page, "analytics-dark");

      // The charts follow the window's width.
      const canvasWidth = () =>
        page.evaluate(
          () =>
            document.querySelector('[role="slider"][aria-label^="Traces by"] canvas')
              ?.clientWidth ?? 0,
        );
      const wide = await canvasWidth();
      await page.setViewportSize({ width: 760, height: 900 });
      await expect.poll(canvasWidth).toBeLessThan(wide);
      await page.getByRole("combobox", { name: "Theme" }).selectOption("system");
    });
  });

  it("shows the last 24 hours by hour, and a trace sent while it is open", async (context) => {
    const t = suite.recent as TestServer;
    const hourMs = 3_600_000;
    const llmCall = (traceNumber: number, startMs: number) =>
      span({
        trace_id: `tr_${traceNumber.toString(16).padStart(32, "0")}`,
        kind: "llm",
        model: "gpt-4o",
        start_time: new Date(startMs).toISOString(),
        end_time: new Date(startMs + 120).toISOString(),
        duration_ms: 120,
        usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
        cost_usd: 0.0004,
      });
    // Two hours ago, and thirty: only the first is in the last 24 hours.
    const now = Date.now();
    const sent = await t.call("POST", "/traces", {
      resource,
      spans: [llmCall(1, now - 2 * hourMs), llmCall(2, now - 30 * hourMs)],
    });
    expect(sent.status).toBe(200);
    await onPage(context, t, "/analytics?period=24h&tables=errors", async (page) => {
      const table = page
        .getByRole("region", { name: "Errors table" })
        .getByRole("table", { name: "Errors per hour (UTC)" });
      await table.waitFor();
      expect(await figure(page, "Traces")).toBe("1");
      expect(await figure(page, "Tokens")).toBe("42");
      // A row per hour, the current one last.
      expect(await table.getByRole("row").count()).toBe(25);
      await page.getByRole("slider", { name: /^Cost by hour/ }).waitFor();

      const later = await t.call("POST", "/traces", {
        resource,
        spans: [llmCall(3, Date.now() - 1000)],
      });
      expect(later.status).toBe(200);
      await expect.poll(() => figure(page, "Traces"), { timeout: 15_000 }).toBe("2");
      await expectNoAxeViolations(page, "the analytics page, last 24 hours");
      await saveScreenshot(page, "analytics-24h");
    });
  });

  it("says when a period has no spans, and refuses a custom period that ends before it starts", async (context) => {
    await onPage(
      context,
      suite.t as TestServer,
      "/analytics?period=custom&from=2020-01-01&to=2020-01-07",
      async (page) => {
        await page.getByText("No spans in this period").waitFor();
        expect(await page.getByRole("slider").count()).toBe(0);
        await page.getByRole("button", { name: "Show the last 30 days" }).click();
        await expect.poll(() => new URL(page.url()).searchParams.get("period")).toBe("30d");
        await page.getByRole("slider", { name: /^Traces by day/ }).waitFor();
        expect(await figure(page, "Traces")).toBe("20");

        await page.getByLabel("Period").selectOption("custom");
        await page.getByLabel("From").fill("2026-03-10");
        await page.getByLabel("To (included)").fill("2026-03-01");
        await expect
          .poll(() => page.getByRole("alert").innerText())
          .toBe("The end (2026-03-01) is before the start (2026-03-10).");
        expect(await page.getByRole("slider").count()).toBe(0);
        expect(await page.getByLabel("To (included)").getAttribute("aria-invalid")).toBe("true");
        await expectNoAxeViolations(page, "the analytics page, a wrong custom period");
      },
    );
  });

  it("tells a project without traces how to send some, instead of empty axes", async (context) => {
    const t = suite.empty as TestServer;
    await onPage(context, t, "/analytics", async (page) => {
      await page.getByText("No traces yet").waitFor();
      expect(await page.getByText(`export CAIRN_ENDPOINT=${t.server.url}`).count()).toBe(1);
      expect(await page.getByText(`${t.server.url}/v1/traces`).count()).toBe(1);
      expect(await page.getByRole("slider").count()).toBe(0);
      await expectNoAxeViolations(page, "the analytics page of an empty project");
      await saveScreenshot(page, "analytics-empty");
    });
  });
});
