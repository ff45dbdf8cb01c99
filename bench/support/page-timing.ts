// What the dashboard bench measures inside a page, in the page's own clock (performance.now(),
// 0 at the navigation's start): the largest contentful paint (a PerformanceObserver from before
// the page's first script), the moment each watched selector first matches in the DOM (a
// MutationObserver: in the DOM, before it is painted), whether the DOM has gone quiet, and
// whether a key moved a list's or tree's selection (focus, aria-selected or aria-current, or the
// URL), and when.

import type { BrowserContext, Page } from "playwright-core";

interface Bench {
  lcp: { time: number; element: string }[];
  found: Record<string, number>;
  lastMutation: number;
  keyDown?: number;
  moved?: Promise<number>;
}

declare global {
  interface Window {
    __cairnBench: Bench;
  }
}

/**
 * Instruments every page of `context` before its scripts run: LCP entries, the first time each
 * of `selectors` (name → CSS selector) matches, the time of the last DOM change and of the last
 * keydown.
 */
export async function instrument(
  context: BrowserContext,
  selectors: Readonly<Record<string, string>>,
): Promise<void> {
  // tsx compiles this file with esbuild's keepNames, which wraps the functions defined in the
  // ones handed to the page in a __name() call that exists only in Node.
  await context.addInitScript({ content: "globalThis.__name ??= (target) => target;" });
  await context.addInitScript((watched: Record<string, string>) => {
    const bench: Bench = { lcp: [], found: {}, lastMutation: 0 };
    window.__cairnBench = bench;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & {
        element?: Element | null;
      })[]) {
        const element = entry.element;
        const text = (element?.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 40);
        bench.lcp.push({
          time: entry.startTime,
          element: element == null ? "(removed)" : `<${element.tagName.toLowerCase()}> "${text}"`,
        });
      }
    }).observe({ type: "largest-contentful-paint", buffered: true });
    const look = () => {
      bench.lastMutation = performance.now();
      for (const [name, selector] of Object.entries(watched)) {
        if (bench.found[name] === undefined && document.querySelector(selector) !== null) {
          bench.found[name] = performance.now();
        }
      }
    };
    new MutationObserver(look).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    window.addEventListener(
      "keydown",
      (event) => {
        bench.keyDown = event.timeStamp;
      },
      true,
    );
  }, selectors);
}

/** When `name` first matched (ms since navigation), or undefined if it has not within `timeoutMs`. */
export async function waitForFound(
  page: Page,
  name: string,
  timeoutMs: number,
): Promise<number | undefined> {
  try {
    await page.waitForFunction((key) => window.__cairnBench?.found[key] !== undefined, name, {
      timeout: timeoutMs,
    });
  } catch {
    return undefined;
  }
  return page.evaluate((key) => window.__cairnBench.found[key], name);
}

/** Waits until the DOM has not changed for `quietMs` (at most `timeoutMs`). */
export async function waitForQuiet(page: Page, quietMs: number, timeoutMs: number): Promise<void> {
  await page
    .waitForFunction(
      (quiet) => performance.now() - (window.__cairnBench?.lastMutation ?? 0) >= quiet,
      quietMs,
      { timeout: timeoutMs, polling: 50 },
    )
    .catch(() => undefined);
}

/** The largest contentful paint so far: its time (ms since navigation) and its element. */
export async function largestContentfulPaint(
  page: Page,
): Promise<{ time: number; element: string } | undefined> {
  return page.evaluate(() => window.__cairnBench.lcp.at(-1));
}

/** How many elements match `selector` now. */
export function countOf(page: Page, selector: string): Promise<number> {
  return page.evaluate((css) => document.querySelectorAll(css).length, selector);
}

/**
 * Focuses the first of `rows` (the composite widget's own tab stop when it has one: a row with
 * tabindex 0, else the container of an aria-activedescendant widget), presses `key`, and answers
 * when the key was pressed (its keydown's timeStamp: when the browser took the input, before the
 * page handled it) and when the selection moved, ms since navigation; undefined when it did not
 * move within `timeoutMs`.
 */
export async function keyMovesSelection(
  page: Page,
  rows: string,
  key: string,
  timeoutMs: number,
): Promise<{ pressedAt: number; movedAt: number } | undefined> {
  const focused = await page.evaluate(
    ({ css, timeout }) => {
      const rowList = [...document.querySelectorAll<HTMLElement>(css)];
      const first = rowList[0];
      if (first === undefined) return false;
      const widget = first.closest<HTMLElement>(
        "[role=tree], [role=treegrid], [role=grid], [role=listbox]",
      );
      const entry =
        rowList.find((row) => row.tabIndex === 0) ??
        (widget?.hasAttribute("aria-activedescendant") || widget?.tabIndex === 0 ? widget : first);
      entry?.focus();
      // What "the selection" is, whichever way the widget shows it.
      const state = () => {
        const active = document.activeElement;
        const selected = [...document.querySelectorAll(css)].find(
          (row) =>
            row.getAttribute("aria-selected") === "true" ||
            (row.hasAttribute("aria-current") && row.getAttribute("aria-current") !== "false"),
        );
        return [
          active?.id || active?.textContent?.slice(0, 60),
          widget?.getAttribute("aria-activedescendant"),
          selected?.id || selected?.textContent?.slice(0, 60),
          location.href,
        ].join("\u0000");
      };
      const before = state();
      window.__cairnBench.moved = new Promise<number>((resolve) => {
        let done = false;
        const finish = (at: number) => {
          done = true;
          observer.disconnect();
          resolve(at);
        };
        const check = () => {
          if (!done && state() !== before) finish(performance.now());
          return done;
        };
        const observer = new MutationObserver(() => void check());
        observer.observe(document, { subtree: true, childList: true, attributes: true });
        document.addEventListener("focusin", () => void check(), true);
        const frame = () => {
          if (!check()) requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
        setTimeout(() => {
          if (!done) finish(-1);
        }, timeout);
      });
      return true;
    },
    { css: rows, timeout: timeoutMs },
  );
  if (!focused) return undefined;
  await page.keyboard.press(key);
  const movedAt = await page.evaluate(() => window.__cairnBench.moved as Promise<number>);
  if (movedAt < 0) return undefined;
  const keyDown = await page.evaluate(() => window.__cairnBench.keyDown ?? Number.NaN);
  return { pressedAt: keyDown, movedAt };
}

/** When the answer to the page's request for `path` (and any query) had come, ms since navigation. */
export function answeredAt(page: Page, path: string): Promise<number | undefined> {
  return page.evaluate((wanted) => {
    const entry = performance
      .getEntriesByType("resource")
      .find((each) => new URL(each.name).pathname === wanted) as
      | PerformanceResourceTiming
      | undefined;
    return entry?.responseEnd;
  }, path);
}
