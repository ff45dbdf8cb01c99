// The Traces and Trace pages in chromium against a real service seeded by the SDK and the API:
// the list's columns, filters, search, sorting and pages, all in the URL; a trace sent while the
// page is open shown without a reload; a trace's span tree worked by keyboard, a model call's
// messages as a conversation and raw, a sandbox command's run, an error, a reviewer's score; and
// a 10,000-span trace that opens and answers keys.

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { resource, span, startTestServer } from "../server/helpers.js";
import {
  dashboardSuite,
  expectNoAxeViolations,
  onSignedInPage,
  saveScreenshot,
} from "./harness.js";
import { seedAgentTraces, seedLargeTrace } from "./seed-traces.js";

/** Batch jobs, a minute apart in the last hour, each a second longer than the one before. */
const batchJobs = 55;
const execTrace = `tr_${"e".repeat(31)}1`;
const markupTrace = `tr_${"d".repeat(31)}1`;
const markupName = '<img src=x onerror="window.__pwned = 1">';

const suite = dashboardSuite(startTestServer, async (t) => {
  const seeded = await seedAgentTraces(t);
  const now = Date.now();
  const jobs = Array.from({ length: batchJobs }, (_, index) => {
    const start = now - 3_600_000 + index * 60_000;
    return span({
      trace_id: `tr_${(0xb000 + index).toString(16).padStart(32, "0")}`,
      name: "nightly-batch",
      kind: "chain",
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 1_000 * (index + 1)).toISOString(),
      duration_ms: 1_000 * (index + 1),
      input: `batch number ${index}`,
      output: "done",
      tags: ["batch"],
    });
  });
  expect((await t.call("POST", "/traces", { resource, spans: jobs })).status).toBe(200);
  // A sandboxed command's `tool` span, with what cairn-ai/sandbox records of the exec.
  const execStart = now - 7_200_000;
  const execSpans = [
    span({
      trace_id: execTrace,
      span_id: "e000000000000001",
      name: "shell-agent",
      kind: "agent",
      start_time: new Date(execStart).toISOString(),
      end_time: new Date(execStart + 900).toISOString(),
      duration_ms: 900,
    }),
    span({
      trace_id: execTrace,
      span_id: "e000000000000002",
      parent_span_id: "e000000000000001",
      name: "sandbox exec ls",
      kind: "tool",
      start_time: new Date(execStart + 100).toISOString(),
      end_time: new Date(execStart + 700).toISOString(),
      duration_ms: 600,
      input: JSON.stringify("ls -la /workspace"),
      output: JSON.stringify({
        exitCode: 2,
        signal: null,
        stdout: "README.md\nsrc\n",
        stderr: "ls: cannot access 'missing': No such file or directory\n",
      }),
      attributes: {
        "tool.name": "sandbox.exec",
        "cairn.sandbox.id": "sbx_0123456789abcdef",
        "cairn.sandbox.exec_id": "exec_1",
        "cairn.sandbox.output_bytes": 71,
        "process.command_args": ["ls", "-la", "/workspace", "missing"],
        "process.exit.code": 2,
        "cairn.sandbox.cpu_seconds": 0.25,
        "cairn.sandbox.memory_peak_bytes": 3_145_728,
      },
    }),
  ];
  expect((await t.call("POST", "/traces", { resource, spans: execSpans })).status).toBe(200);
  // Markup in a name and an input: shown as text, never run.
  expect(
    (
      await t.call("POST", "/traces", {
        resource,
        spans: [
          span({
            trace_id: markupTrace,
            span_id: "d000000000000001",
            name: markupName,
            start_time: new Date(now - 7_300_000).toISOString(),
            end_time: new Date(now - 7_299_000).toISOString(),
            duration_ms: 1_000,
            input: JSON.stringify([{ role: "user", content: markupName }]),
            output: '<script>window.__pwned = "output"</script>',
          }),
        ],
      })
    ).status,
  ).toBe(200);
  const largeTrace = await seedLargeTrace(t, 10_000);
  return { ...seeded, largeTrace };
});

const list = (page: Page) => page.getByRole("table", { name: /^Traces, sorted by/ });
const rowOf = (page: Page, name: string) =>
  list(page)
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name, exact: true }) });
const rowNames = async (page: Page) => list(page).locator("tbody th[scope=row] a").allInnerTexts();
const param = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);

describe("the Traces page", () => {
  it("lists traces with their columns, and filters by kind, status and tag in the URL", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      const { seeded } = suite;
      const trip = rowOf(page, seeded.agentName);
      await expect.poll(() => trip.count()).toBe(1);
      const cells = await trip.getByRole("cell").allInnerTexts();
      // Time, status, latency, tokens, cost, model, session, tags.
      expect(cells[1]).toBe("OK");
      expect(cells[3]).toBe("150");
      expect(cells[5]).toBe("gpt-4o-mini");
      expect(cells[6]).toBe(seeded.sessionId);
      expect(cells[7]?.split(/\s+/)).toEqual(["beta", "travel"]);
      expect(await rowOf(page, seeded.failingName).getByText("Error").count()).toBe(1);
      await expectNoAxeViolations(page, "the traces page");
      await saveScreenshot(page, "traces");

      await page.getByLabel("Kind").selectOption("agent");
      await expect.poll(() => param(page, "kind")).toBe("agent");
      await expect.poll(() => rowOf(page, "nightly-batch").count()).toBe(0);
      expect(await trip.count()).toBe(1);

      await page.getByLabel("Status").selectOption("error");
      await expect.poll(() => trip.count()).toBe(0);
      expect(await rowOf(page, seeded.failingName).count()).toBe(1);
      // Back undoes one filter at a time.
      await page.goBack();
      await expect.poll(() => trip.count()).toBe(1);
      expect(await page.getByLabel("Status").inputValue()).toBe("");

      await page.getByLabel("Tag").fill("travel");
      await page.getByLabel("Tag").press("Enter");
      await expect.poll(() => param(page, "tag")).toBe("travel");
      await expect.poll(() => rowNames(page)).toEqual([seeded.agentName]);
      await page.getByRole("button", { name: "Clear filters" }).click();
      await expect.poll(() => rowOf(page, "nightly-batch").count()).toBeGreaterThan(0);
      expect(param(page, "tag")).toBeNull();
    });
  });

  it("searches names, inputs and outputs, safely, from the search box", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      const search = page.getByRole("searchbox", { name: "Search" });
      await search.fill("Bergen");
      await expect.poll(() => param(page, "q")).toBe("Bergen");
      await expect.poll(() => rowNames(page)).toEqual([suite.seeded.agentName]);
      // Words of an error message, in a failed span.
      await search.fill("booking 503");
      await expect.poll(() => rowNames(page)).toEqual([suite.seeded.failingName]);
      // Search syntax is only text: nothing matches, nothing fails.
      await search.fill('"( NEAR* -');
      await expect.poll(() => page.getByText("No traces match").count()).toBe(1);
      expect(await page.getByRole("alert").count()).toBe(0);
    });
  });

  it("sorts by latency from the column header, and pages through with Older and Newer", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      const latency = list(page).getByRole("columnheader", { name: /Latency/ });
      await expect.poll(() => rowOf(page, "nightly-batch").count()).toBeGreaterThan(0);
      await latency.getByRole("button").click();
      await expect.poll(() => param(page, "sort")).toBe("latency");
      expect(await latency.getAttribute("aria-sort")).toBe("descending");
      // The 10,000-span run lasts 92 minutes: the longest.
      await expect.poll(async () => (await rowNames(page))[0]).toBe("research-agent");
      await latency.getByRole("button").click();
      await expect.poll(() => latency.getAttribute("aria-sort")).toBe("ascending");
      await expect.poll(() => param(page, "order")).toBe("asc");

      // By time, newest first: 60 traces make two pages.
      await page.goto(page.url().replace(/\?.*$/, ""));
      await expect.poll(() => list(page).locator("tbody tr").count()).toBe(50);
      const first = await rowNames(page);
      await page.getByRole("button", { name: "Older" }).click();
      await expect.poll(() => param(page, "cursor")).not.toBeNull();
      await expect.poll(() => list(page).locator("tbody tr").count()).toBe(60 - 50);
      const second = await rowNames(page);
      expect(new Set(second)).toEqual(new Set(["nightly-batch", "shell-agent", markupName]));
      expect(await page.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
      await page.getByRole("button", { name: "Newer" }).click();
      await expect.poll(() => rowNames(page)).toEqual(first);
      expect(param(page, "cursor")).toBeNull();
    });
  });

  it("shows a trace sent while it is open at the top, without moving the focus", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      await expect.poll(() => rowOf(page, suite.seeded.agentName).count()).toBe(1);
      const search = page.getByRole("searchbox", { name: "Search" });
      await search.focus();
      const traceId = `tr_${"f".repeat(31)}1`;
      await suite.t.call("POST", "/traces", {
        resource,
        spans: [
          span({
            trace_id: traceId,
            name: "live-arrival",
            start_time: new Date().toISOString(),
            end_time: new Date(Date.now() + 5).toISOString(),
            duration_ms: 5,
          }),
        ],
      });
      await expect
        .poll(async () => (await rowNames(page))[0], { timeout: 10_000 })
        .toBe("live-arrival");
      expect(await search.evaluate((element) => element === document.activeElement)).toBe(true);

      // Sorted by cost, a new trace waits behind a button rather than moving the list.
      await list(page).getByRole("columnheader", { name: /Cost/ }).getByRole("button").click();
      await expect.poll(() => param(page, "sort")).toBe("cost");
      await suite.t.call("POST", "/traces", {
        resource,
        spans: [
          span({
            trace_id: `tr_${"f".repeat(31)}2`,
            name: "second-arrival",
            start_time: new Date().toISOString(),
            end_time: new Date(Date.now() + 5).toISOString(),
            duration_ms: 5,
          }),
        ],
      });
      const show = page.getByRole("button", { name: "1 new trace — show" });
      await expect.poll(() => show.count(), { timeout: 10_000 }).toBe(1);
      expect(await rowOf(page, "second-arrival").count()).toBe(0);
      await show.click();
      await expect.poll(() => param(page, "sort")).toBeNull();
      await expect.poll(async () => (await rowNames(page))[0]).toBe("second-arrival");
    });
  });
});

describe("the Trace page", () => {
  it("opens from the list; the span tree works by keyboard; a span shows its conversation, raw text and scores", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      const { seeded } = suite;
      await page.getByRole("link", { name: seeded.agentName, exact: true }).focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.url()).toMatch(/\/ui\/traces\/tr_[0-9a-f]{32}$/);
      const tree = page.getByRole("tree", { name: "Spans" });
      const items = tree.getByRole("treeitem");
      await expect.poll(() => items.count()).toBe(4);
      const focusedName = () =>
        page.evaluate(() => document.activeElement?.querySelector(".trace-row-name")?.textContent);

      // The tree's one tab stop, then the arrows.
      await items.first().focus();
      expect(await items.first().getAttribute("aria-expanded")).toBe("true");
      await page.keyboard.press("ArrowDown");
      expect(await focusedName()).toBe("search_guides");
      await page.keyboard.press("ArrowLeft");
      expect(await focusedName()).toBe(seeded.agentName);
      await page.keyboard.press("ArrowLeft");
      await expect.poll(() => items.count()).toBe(1);
      expect(await items.first().getAttribute("aria-expanded")).toBe("false");
      await page.keyboard.press("ArrowRight");
      await expect.poll(() => items.count()).toBe(4);
      await page.keyboard.press("ArrowRight");
      expect(await focusedName()).toBe("search_guides");
      await page.keyboard.press("End");
      expect(await focusedName()).toBe(seeded.toolName);
      await page.keyboard.press("Home");
      expect(await focusedName()).toBe(seeded.agentName);
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      expect(await focusedName()).toBe(seeded.llmName);
      await page.keyboard.press("Enter");
      await expect.poll(() => param(page, "span")).toMatch(/^[0-9a-f]{16}$/);
      expect(await tree.getByRole("treeitem", { selected: true }).innerText()).toContain(
        seeded.llmName,
      );

      // The model call: its messages as a conversation, its tool call, then raw.
      const details = page.getByRole("article");
      await expect
        .poll(() => details.getByRole("heading", { name: `llm ${seeded.llmName}` }).count())
        .toBe(1);
      const input = details.getByRole("list", { name: "Input messages" });
      await expect.poll(() => input.getByRole("listitem").count()).toBe(2);
      expect(await input.getByRole("listitem").nth(1).innerText()).toContain(seeded.question);
      expect(await input.getByRole("listitem").nth(0).innerText()).toMatch(/^System/);
      const output = details.getByRole("list", { name: "Output messages" });
      expect(await output.innerText()).toContain("Calls get_weather");
      await details.getByLabel("Show input and output raw, as stored").check();
      await expect.poll(() => param(page, "raw")).toBe("1");
      await expect.poll(() => input.count()).toBe(0);
      expect(await details.locator("pre").first().innerText()).toContain('"role":"system"');
      await expectNoAxeViolations(page, "the trace page");
      await saveScreenshot(page, "trace");

      // The tool's output, a JSON object, as a tree.
      await details.getByLabel("Show input and output raw, as stored").uncheck();
      await tree.getByRole("treeitem", { name: new RegExp(seeded.toolName) }).click();
      await expect
        .poll(() => details.getByRole("heading", { name: `tool ${seeded.toolName}` }).count())
        .toBe(1);
      await expect
        .poll(() => details.locator(".dash-json-string", { hasText: '"rain"' }).count())
        .toBe(1);

      // Find in the trace: the matches counted, the next one selected.
      await page.getByRole("searchbox", { name: "Find in trace" }).fill("plan");
      await expect
        .poll(() => page.getByRole("status").filter({ hasText: "1 match" }).count())
        .toBe(1);
      await page.getByRole("button", { name: "Next match" }).click();
      await expect
        .poll(() => details.getByRole("heading", { name: `llm ${seeded.llmName}` }).count())
        .toBe(1);

      // A reviewer's score of the selected span, listed once saved.
      await page.getByRole("button", { name: "Add a score" }).click();
      const form = page.getByRole("form", { name: "Add a score" });
      await form.getByLabel("Name").fill("helpfulness");
      await form.getByLabel("Value (0 to 1)").fill("0.8");
      await form.getByLabel("Label (optional)").fill("good plan");
      await form.getByLabel("Comment (optional)").fill("Checked the forecast first.");
      await form.getByLabel(/For the selected span only/).check();
      await form.getByRole("button", { name: "Save score" }).click();
      const scores = page.getByRole("region", { name: "Scores" });
      await expect.poll(() => scores.getByText("helpfulness").count()).toBe(1);
      expect(await scores.innerText()).toContain("0.80");
      expect(await scores.innerText()).toContain("Checked the forecast first.");
      expect(await scores.innerText()).toContain(`span ${seeded.llmName}`);
      const stored = await (
        await suite.t.call("GET", `/traces/${page.url().match(/tr_[0-9a-f]{32}/)?.[0]}/scores`)
      ).json();
      expect(stored.scores).toMatchObject([
        { name: "helpfulness", value: 0.8, label: "good plan", source: "human" },
      ]);

      // Copy the trace id.
      await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
      await page.getByRole("button", { name: /^Copy trace id/ }).click();
      await expect
        .poll(() => page.evaluate(() => navigator.clipboard.readText()))
        .toMatch(/^tr_[0-9a-f]{32}$/);

      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      await expectNoAxeViolations(page, "the trace page, dark");
    });
  }, 60_000);

  it("shows a failed span's error, and a sandbox command with its exit code, CPU, memory and output", async (context) => {
    await onSignedInPage(context, suite, "/traces", async (page) => {
      await page.getByRole("link", { name: suite.seeded.failingName, exact: true }).click();
      const tree = page.getByRole("tree", { name: "Spans" });
      await tree.getByRole("treeitem", { name: /book_hotel/ }).click();
      const error = page.getByRole("region", { name: "Error" });
      await expect.poll(() => error.count()).toBe(1);
      expect(await error.innerText()).toContain(suite.seeded.errorMessage);

      await page.goto(`${suite.t.server.url}/ui/traces/${execTrace}?span=e000000000000002`);
      const exec = page.getByRole("region", { name: "Sandbox command" });
      await expect.poll(() => exec.count()).toBe(1);
      const text = await exec.innerText();
      expect(text).toContain("ls -la /workspace missing");
      expect(text).toMatch(/Exit code\s*2/);
      expect(text).toMatch(/CPU\s*0\.250 s/);
      expect(text).toMatch(/Peak memory\s*3\.0 MiB/);
      await expect.poll(async () => exec.innerText()).toContain("README.md");
      expect(await exec.innerText()).toContain("No such file or directory");
      await expectNoAxeViolations(page, "a sandbox command's span");
    });
  });

  it("shows markup in names, inputs and outputs as text, never running it", async (context) => {
    await onSignedInPage(context, suite, "/traces?q=onerror", async (page) => {
      await expect.poll(() => rowNames(page)).toEqual([markupName]);
      await page.getByRole("link", { name: markupName }).click();
      await page.getByRole("tree", { name: "Spans" }).getByRole("treeitem").first().click();
      const details = page.getByRole("article");
      await expect.poll(() => details.getByText(markupName).count()).toBeGreaterThan(0);
      await expect
        .poll(() => details.getByText('<script>window.__pwned = "output"</script>').count())
        .toBe(1);
      expect(await page.locator("main img, main script").count()).toBe(0);
      expect(await page.evaluate(() => "__pwned" in window)).toBe(false);
    });
  });

  it("opens a 10,000-span trace that answers keys, rendering only the rows in sight", async (context) => {
    await onSignedInPage(context, suite, `/traces/${suite.seeded.largeTrace}`, async (page) => {
      const tree = page.getByRole("tree", { name: "Spans" });
      const items = tree.getByRole("treeitem");
      await expect.poll(() => items.count(), { timeout: 15_000 }).toBeGreaterThan(10);
      // Virtualized: the page holds what is in sight, not 10,000 rows.
      expect(await items.count()).toBeLessThan(200);
      const focusedId = () => page.evaluate(() => document.activeElement?.id);
      await tree.locator("[role=treeitem][tabindex='0']").focus();
      const before = await focusedId();
      await page.keyboard.press("ArrowDown");
      await expect.poll(focusedId).not.toBe(before);
      await page.keyboard.press("End");
      const last = await focusedId();
      expect(last).toMatch(/^span-/);
      // The last span is far down: the tree scrolled to it and it has the focus.
      expect(
        await page.evaluate(() => document.querySelector(".trace-tree")?.scrollTop ?? 0),
      ).toBeGreaterThan(10_000);
      await page.keyboard.press("Home");
      await expect.poll(focusedId).not.toBe(last);

      await page.getByRole("button", { name: "Collapse all" }).click();
      await expect.poll(() => items.count()).toBe(1);
      await page.getByRole("button", { name: "Expand all" }).click();
      await expect.poll(() => items.count()).toBeGreaterThan(10);
      // Only the failed web searches and the spans above them.
      await page.getByRole("searchbox", { name: "Find in trace" }).fill("search_web");
      await page.getByLabel("Only matches").check();
      await expect.poll(() => param(page, "only")).toBe("1");
      const names = await tree.locator(".trace-row-name").allInnerTexts();
      expect(names).toContain("search_web");
      expect(names).not.toContain("run_python");
      await saveScreenshot(page, "trace-10000-spans");
    });
  }, 60_000);
});
