// The dashboard's frame in chromium against a real service: a sign-in link opens it on the
// traces page with the project's name, every section is reachable from the navigation by
// keyboard, the theme can be switched, and signing out leaves the sign-in page and no data.

import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Chromium, needChromium } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../server/helpers.js";
import {
  expectNoAxeViolations,
  launchForDashboard,
  openSignedIn,
  saveScreenshot,
} from "./harness.js";

const suite = {
  chromium: { reason: "not launched" } as Chromium,
  t: undefined as TestServer | undefined,
};

beforeAll(async () => {
  suite.chromium = await launchForDashboard();
  suite.t = await startTestServer();
}, 120_000);

afterAll(async () => {
  await suite.chromium.browser?.close();
  await suite.t?.stop();
});

describe("the dashboard's frame", () => {
  it("opens signed in from a one-time link, with every section in the navigation", async (context) => {
    needChromium(context, suite.chromium);
    const t = suite.t as TestServer;
    const {
      page,
      errors,
      context: browserContext,
    } = await openSignedIn(suite.chromium.browser as Browser, t);
    try {
      await expect.poll(() => page.url()).toMatch(/\/ui\/traces$/);
      const nav = page.getByRole("navigation", { name: "Sections" });
      for (const name of [
        "Traces",
        "Sessions",
        "Evaluations",
        "Versions",
        "Analytics",
        "Sandboxes",
      ]) {
        await expect.poll(() => nav.getByRole("link", { name }).count()).toBe(1);
      }
      // By keyboard: the skip link first, then into the page.
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(
        "Skip to content",
      );
      // While a section's code is on its way (a slow network), the page already has its heading.
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holding: Promise<void>[] = [];
      await page.route("**/*.js", (route) => {
        const continued = held.then(() => route.continue());
        holding.push(continued);
        return continued;
      });
      await nav.getByRole("link", { name: "Sessions" }).focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.url()).toMatch(/\/ui\/sessions$/);
      await expect
        .poll(() => page.getByRole("heading", { level: 1, name: "Sessions" }).count())
        .toBe(1);
      await expectNoAxeViolations(page, "a section while its code loads");
      release();
      await Promise.all(holding);
      await page.unroute("**/*.js");
      expect(await nav.getByRole("link", { name: "Sessions" }).getAttribute("aria-current")).toBe(
        "page",
      );
      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      expect(await page.evaluate(() => document.documentElement.dataset.cairnTheme)).toBe("dark");
      await expectNoAxeViolations(page, "the frame, dark");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("system");
      await page.getByRole("button", { name: "Sign out" }).click();
      await expect
        .poll(() => page.getByRole("heading", { name: "Sign in to Cairn" }).count())
        .toBe(1);
      // The cookie is revoked: the API refuses it now.
      const status = await page.evaluate(async () => (await fetch("/auth/session")).status);
      expect(status).toBe(401);
      expect(errors.filter((error) => !error.includes("401"))).toEqual([]);
    } finally {
      await browserContext.close();
    }
  });

  it("shows a signed-out browser the sign-in page and never data", async (context) => {
    needChromium(context, suite.chromium);
    const t = suite.t as TestServer;
    const browserContext = await (suite.chromium.browser as Browser).newContext();
    const page = await browserContext.newPage();
    try {
      await page.goto(`${t.server.url}/ui/traces`);
      await expect
        .poll(() => page.getByRole("heading", { name: "Sign in to Cairn" }).count())
        .toBe(1);
      expect(await page.getByRole("navigation", { name: "Sections" }).count()).toBe(0);
      await expectNoAxeViolations(page, "the sign-in page");
      await saveScreenshot(page, "sign-in");
      // A wrong key is named as wrong; the right one signs in.
      await page.getByLabel("API key").fill("not-a-key");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect
        .poll(() => page.getByText("That API key is not valid for this service.").count())
        .toBe(1);
      await page.getByLabel("API key").fill(t.apiKey);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByRole("navigation", { name: "Sections" }).count()).toBe(1);
      expect(await page.evaluate(() => document.cookie)).toBe("");
    } finally {
      await browserContext.close();
    }
  });
});
