// The Versions page in chromium against a real service: the publish history with who and when,
// the current version marked in words, and a rollback asked for in a modal dialog first —
// Escape cancels it and changes nothing, the focus kept inside while it is open and given back
// after; confirmed, the page shows the new current version and the history says who did it.
// A description with markup is shown as text.

import { describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../server/helpers.js";
import {
  dashboardSuite,
  expectNoAxeViolations,
  onSignedInPage,
  saveScreenshot,
} from "./harness.js";
import { seedVersions } from "./seed.js";

const suite = dashboardSuite(startTestServer, seedVersions);

async function currentVersion(t: TestServer): Promise<string> {
  return ((await (await t.call("GET", "/versions/current")).json()) as { version: string }).version;
}

describe("the Versions page", () => {
  it("rolls back after a confirmation that Escape cancels, and shows the new current version", async (context) => {
    await onSignedInPage(context, suite, "/versions", async (page) => {
      const table = page.getByRole("table", { name: /^Published versions/ });
      const row = (version: string) =>
        table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: version }) });
      await expect.poll(() => row("1.1.0").getByText("Current").count()).toBe(1);
      expect(await row("1.0.0").getByText("Current").count()).toBe(0);
      expect(await row("1.0.0").innerText()).toContain(
        "First release: refunds and shipping answers.",
      );
      // Who published it: the API key, by its id and first characters.
      expect(await row("1.0.0").getByRole("cell").nth(3).innerText()).toMatch(
        /^key_[0-9a-f]+ \(test-key-0…\)$/,
      );
      const history = page.getByRole("region", { name: "History" });
      expect(await history.getByRole("listitem").allInnerTexts()).toEqual([
        expect.stringMatching(/Published 1\.1\.0 by key_[0-9a-f]+ \(test-key-0…\)/),
        expect.stringMatching(/Published 1\.0\.0 by key_[0-9a-f]+ \(test-key-0…\)/),
      ]);
      expect(await row("1.1.0").getByRole("button").count()).toBe(0);
      await expectNoAxeViolations(page, "the versions page");
      await saveScreenshot(page, "versions");

      // Asked first; Escape cancels, the focus goes back to the button, nothing changes.
      const rollBack = page.getByRole("button", { name: "Roll back to 1.0.0" });
      await rollBack.click();
      const dialog = page.getByRole("alertdialog", { name: "Roll back to 1.0.0?" });
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.innerText()).toContain(
        "1.0.0 becomes the current version instead of 1.1.0",
      );
      const focusedLabel = () => page.evaluate(() => document.activeElement?.textContent ?? "");
      const focusInDialog = () =>
        page.evaluate(() => document.activeElement?.closest("dialog") !== null);
      expect(await focusedLabel()).toBe("Cancel");
      // The rest of the page is out of reach while it is open: Tab stays in the dialog.
      for (let press = 0; press < 3; press++) {
        await page.keyboard.press("Tab");
        expect(await focusInDialog()).toBe(true);
      }
      await expectNoAxeViolations(page, "the rollback dialog");
      await page.keyboard.press("Escape");
      await expect.poll(() => dialog.count()).toBe(0);
      await expect.poll(focusedLabel).toBe("Roll back to 1.0.0");
      expect(await currentVersion(suite.t)).toBe("1.1.0");
      expect(await row("1.1.0").getByText("Current").count()).toBe(1);

      // Confirmed: 1.0.0 is current, on the page and in the service.
      await rollBack.click();
      await dialog.getByRole("button", { name: "Roll back" }).click();
      await expect
        .poll(() => page.getByRole("status").innerText())
        .toBe("Rolled back: 1.0.0 is the current version.");
      await expect.poll(() => row("1.0.0").getByText("Current").count()).toBe(1);
      expect(await row("1.1.0").getByText("Current").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Roll back to 1.1.0" }).count()).toBe(1);
      expect(await currentVersion(suite.t)).toBe("1.0.0");
      expect((await history.getByRole("listitem").allInnerTexts())[0]).toMatch(
        /Rolled back to 1\.0\.0 by dashboard:/,
      );
      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      await expectNoAxeViolations(page, "the versions page, dark");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("system");
    });
  });

  it("shows a description with markup as text", async (context) => {
    const description = `<img src=x onerror="document.title='pwned'"> fixes`;
    const published = await suite.t.call("POST", "/versions", { version: "1.2.0", description });
    expect(published.status).toBe(201);
    await onSignedInPage(context, suite, "/versions", async (page) => {
      await expect.poll(() => page.getByText(description).count()).toBe(1);
      expect(await page.locator("main img").count()).toBe(0);
      expect(await page.title()).not.toBe("pwned");
    });
  });
});
