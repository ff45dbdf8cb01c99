// What the dashboard's browser tests share: the dashboard built once (scripts/build-dashboard.ts,
// the same build `npm start` makes), a real service serving it, Debian's chromium signed in by a
// one-time link as a person would be, axe on every page, and a screenshot of each page under
// test/.artifacts/dashboard/ (ignored by git).

import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, type TestContext } from "vitest";
import { ensureDashboardBuilt } from "../../scripts/build-dashboard.js";
import { type Chromium, launchChromium, needChromium } from "../helpers/browser.js";
import type { TestServer } from "../server/helpers.js";

export { expectNoAxeViolations } from "../helpers/axe.js";

export const artifacts = fileURLToPath(new URL("../.artifacts/dashboard/", import.meta.url));

/**
 * Chromium, with the dashboard built. Vitest's global setup builds it before the test files run
 * (test/helpers/dashboard-global-setup.ts); this only builds when a file is run some other way.
 */
export async function launchForDashboard(): Promise<Chromium> {
  await ensureDashboardBuilt();
  await mkdir(artifacts, { recursive: true });
  return launchChromium();
}

/** A one-time sign-in link for the test server's project, as `cairn open` asks for one. */
export async function signInLink(t: TestServer): Promise<string> {
  const response = await t.call("POST", "/auth/login-codes");
  expect(response.status).toBe(201);
  const { url } = (await response.json()) as { url: string };
  return url;
}

export interface DashboardPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Page errors and console errors seen so far: a test expects none. */
  readonly errors: string[];
}

/** A fresh browser context (its own cookies), signed in by a link, on `path` (under /ui). */
export async function openSignedIn(
  browser: Browser,
  t: TestServer,
  path = "/traces",
  options: { colorScheme?: "light" | "dark" } = {},
): Promise<DashboardPage> {
  const context = await browser.newContext({
    viewport: { width: 1360, height: 900 },
    colorScheme: options.colorScheme ?? "light",
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${message.text()} ${message.location().url}`);
  });
  await page.goto(await signInLink(t));
  await page.waitForURL(/\/ui\//);
  if (path !== "/traces") await page.goto(`${t.server.url}/ui${path}`);
  return { context, page, errors };
}

/** Saves a screenshot of the whole page as test/.artifacts/dashboard/<name>.png. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const path = `${artifacts}${name}.png`;
  await page.screenshot({ path, fullPage: false });
  return path;
}

/**
 * Chromium and a service for the tests of a file: launched, started (and seeded) before them,
 * closed and stopped after. Read its fields inside the tests, once the hooks have run.
 */
export function dashboardSuite<Seeded>(
  start: () => Promise<TestServer>,
  seed: (t: TestServer) => Promise<Seeded>,
): { chromium: Chromium; t: TestServer; seeded: Seeded } {
  const suite = {
    chromium: { reason: "not launched" } as Chromium,
    t: undefined as unknown as TestServer,
    seeded: undefined as unknown as Seeded,
  };
  beforeAll(async () => {
    suite.chromium = await launchForDashboard();
    suite.t = await start();
    suite.seeded = await seed(suite.t);
  }, 120_000);
  afterAll(async () => {
    await suite.chromium.browser?.close();
    await suite.t?.stop();
  });
  return suite;
}

/**
 * Opens `path` signed in (skipping the test without chromium), hands the page to `use`, expects
 * no page or console error but those `allowed` matches, and closes the browser context.
 */
export async function onSignedInPage(
  context: TestContext,
  suite: { chromium: Chromium; t: TestServer },
  path: string,
  use: (page: Page) => Promise<void>,
  allowed?: RegExp,
): Promise<void> {
  needChromium(context, suite.chromium);
  const opened = await openSignedIn(suite.chromium.browser, suite.t, path);
  try {
    await use(opened.page);
    expect(opened.errors.filter((error) => allowed === undefined || !allowed.test(error))).toEqual(
      [],
    );
  } finally {
    await opened.context.close();
  }
}
