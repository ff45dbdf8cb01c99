// The Sessions and Session pages in chromium against a real service seeded by the SDK: the list
// with its figures and filters in the URL; a session read as a conversation turn by turn, with
// its totals, its events in time order and a link to each turn's trace; Page Down from turn to
// turn; a session of hundreds of turns kept to what is on screen and read a page at a time; and
// markup in a conversation shown as text, never run.

import { describe, expect, it } from "vitest";
import { resource, span, startTestServer } from "../server/helpers.js";
import {
  dashboardSuite,
  expectNoAxeViolations,
  onSignedInPage,
  saveScreenshot,
} from "./harness.js";
import { seedLongSession, seedSession } from "./seed.js";

const suite = dashboardSuite(startTestServer, async (t) => {
  const seeded = await seedSession(t);
  // Another session, tagged otherwise, for the tag filter to leave out.
  await t.call("POST", "/traces", {
    resource,
    spans: [
      span({ trace_id: `tr_${"5".repeat(32)}`, session_id: "sales-chat-7", tags: ["sales"] }),
    ],
  });
  return seeded;
});

describe("the Sessions page", () => {
  it("lists sessions with their figures, and filters by tag in the URL", async (context) => {
    await onSignedInPage(
      context,
      suite,
      // The seeded traces are dated now and in November 2026: a period that holds both.
      "/sessions?period_start=2026-01-01&period_end=2030-12-31",
      async (page) => {
        const table = page.getByRole("table", { name: "Sessions, the last active first" });
        const row = table.getByRole("row").filter({ hasText: suite.seeded.sessionId });
        await expect.poll(() => row.count()).toBe(1);
        // Three turns (the event outside any call is not one), tokens and no errors.
        const cells = await row.getByRole("cell").allInnerTexts();
        expect(cells.slice(2, 4)).toEqual(["3", "270"]);
        expect(cells[7]).toBe("support");
        expect(await table.getByRole("row").filter({ hasText: "sales-chat-7" }).count()).toBe(1);
        await expectNoAxeViolations(page, "the sessions page");
        await saveScreenshot(page, "sessions");

        await page.getByLabel("Tag").fill("support");
        await page.getByRole("button", { name: "Apply" }).click();
        await expect.poll(() => new URL(page.url()).searchParams.get("tag")).toBe("support");
        await expect
          .poll(() => table.getByRole("row").filter({ hasText: "sales-chat-7" }).count())
          .toBe(0);
        expect(await row.count()).toBe(1);
        // The filter is the URL: Back undoes it.
        await page.goBack();
        await expect
          .poll(() => table.getByRole("row").filter({ hasText: "sales-chat-7" }).count())
          .toBe(1);
        expect(await page.getByLabel("Tag").inputValue()).toBe("");

        await row.getByRole("link", { name: suite.seeded.sessionId }).click();
        await expect.poll(() => page.url()).toMatch(/\/ui\/sessions\/support-chat-42$/);
        await expect.poll(() => page.getByRole("heading", { name: "Turn 1" }).count()).toBe(1);
      },
    );
  });
});

describe("the Session page", () => {
  it("reads as a conversation with totals, events in time order and each turn's trace", async (context) => {
    await onSignedInPage(context, suite, `/sessions/${suite.seeded.sessionId}`, async (page) => {
      const feed = page.getByRole("feed", { name: "Turns and events" });
      await expect.poll(() => feed.getByRole("article").count()).toBe(5);
      // Turns and events in time order: the event before the first turn, the handoff in turn 2.
      const titles = await feed.getByRole("article").getByRole("heading").allInnerTexts();
      expect(titles.map((title) => title.replace("◆", "").trim())).toEqual([
        "Event: user-joined",
        "Turn 1",
        "Turn 2",
        "Event: handoff",
        "Turn 3",
      ]);
      // Each turn: the user's question and the assistant's answer as chat messages.
      for (const [index, question] of suite.seeded.questions.entries()) {
        const turn = feed.getByRole("article", { name: `Turn ${index + 1}` });
        const messages = turn
          .getByRole("list", { name: `Turn ${index + 1}` })
          .getByRole("listitem");
        expect(await messages.allInnerTexts()).toEqual([
          `User\n${question}`,
          `Assistant\n${suite.seeded.answers[index]}`,
        ]);
        expect(await turn.getByText("Latency").count()).toBe(1);
      }
      // The history the model was sent again is folded, and there when asked for.
      const third = feed.getByRole("article", { name: "Turn 3" });
      const history = third.getByText(
        "5 earlier messages sent with it (system prompt and history)",
      );
      expect(await history.count()).toBe(1);
      expect(await third.getByText("You are the support agent.").isVisible()).toBe(false);
      await history.click();
      expect(await third.getByText("You are the support agent.").isVisible()).toBe(true);
      // Turn 2's tokens: 70 in, 20 out.
      expect(
        await feed.getByRole("article", { name: "Turn 2" }).getByText("(70 in, 20 out)").count(),
      ).toBe(1);
      const handoff = feed.getByRole("article", { name: "Event: handoff" });
      expect(await handoff.innerText()).toContain("during turn 2");
      expect(await handoff.getByRole("definition").allInnerTexts()).toEqual(["human", "shipping"]);

      // The totals over the whole session.
      const totals = page.getByRole("region", { name: "Totals" });
      expect(await totals.getByText("Turns").count()).toBe(1);
      const totalsText = await totals.innerText();
      expect(totalsText).toMatch(/Turns\s+3\s+\(\+1 events\)/);
      expect(totalsText).toMatch(/Tokens\s+270\s+\(210 in, 60 out\)/);
      expect(totalsText).toMatch(/Errors\s+none/);

      await expectNoAxeViolations(page, "the session page");
      await saveScreenshot(page, "session");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
      await expectNoAxeViolations(page, "the session page, dark");
      await page.getByRole("combobox", { name: "Theme" }).selectOption("system");

      // Page Down moves from one article of the feed to the next.
      await feed.getByRole("article", { name: "Turn 1" }).focus();
      await page.keyboard.press("PageDown");
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.querySelector("h3")?.textContent))
        .toBe("Turn 2");
      await page.keyboard.press("PageUp");
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.querySelector("h3")?.textContent))
        .toBe("Turn 1");

      // A turn's trace, one click away.
      const detail = await (
        await suite.t.call("GET", `/sessions/${suite.seeded.sessionId}`)
      ).json();
      const secondTurn = detail.traces.filter(
        (trace: { session_event: boolean }) => !trace.session_event,
      )[1];
      await page.getByRole("link", { name: "Open trace of turn 2" }).click();
      await expect.poll(() => page.url()).toMatch(new RegExp(`/ui/traces/${secondTurn.trace_id}$`));
    });
  });

  it("keeps a session of 300 turns to what is on screen and reads it a page at a time", async (context) => {
    await seedLongSession(suite.t, "long-session", 300);
    await onSignedInPage(context, suite, "/sessions/long-session", async (page) => {
      const feed = page.getByRole("feed", { name: "Turns and events" });
      await expect
        .poll(() => feed.getByRole("heading", { name: "Turn 1", exact: true }).count())
        .toBe(1);
      const totals = await page.getByRole("region", { name: "Totals" }).innerText();
      expect(totals).toMatch(/Turns\s+300/);
      // Only what is near the viewport is in the page.
      expect(await feed.getByRole("article").count()).toBeLessThan(40);
      // Down to the end, pages of turns read as the reader nears it.
      await expect
        .poll(
          async () => {
            await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
            return feed.getByRole("heading", { name: "Turn 300", exact: true }).count();
          },
          { timeout: 15_000 },
        )
        .toBe(1);
      expect(await feed.getByRole("article").count()).toBeLessThan(40);
      expect(await page.getByRole("button", { name: "Load more turns" }).count()).toBe(0);
      expect(
        await feed.getByRole("article", { name: "Turn 300" }).getAttribute("aria-setsize"),
      ).toBe("300");
    });
  });

  it("shows markup in a conversation as text, never as HTML", async (context) => {
    const attack = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
    await suite.t.call("POST", "/traces", {
      resource,
      spans: [
        span({
          trace_id: `tr_${"6".repeat(32)}`,
          session_id: "markup-chat",
          input: JSON.stringify([{ role: "user", content: attack }]),
          output: attack,
        }),
      ],
    });
    await onSignedInPage(context, suite, "/sessions/markup-chat", async (page) => {
      const turn = page.getByRole("article", { name: "Turn 1" });
      await expect.poll(() => turn.getByText(attack).count()).toBe(2);
      expect(await turn.locator("img, script").count()).toBe(0);
      expect(await page.title()).not.toBe("pwned");
    });
  });

  it("says a session the project does not have is not there", async (context) => {
    await onSignedInPage(
      context,
      suite,
      "/sessions/no-such-session",
      async (page) => {
        await expect.poll(() => page.getByText("No such session").count()).toBe(1);
        // The service's 404 is the only error the console saw.
      },
      /404/,
    );
  });
});
