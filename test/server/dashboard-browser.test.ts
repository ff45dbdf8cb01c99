import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Chromium, launchChromium, needChromium } from "../helpers/browser.js";
import { fakeDashboard } from "./dashboard-helpers.js";
import { startTestServer, type TestServer } from "./helpers.js";

// A real Chromium signed in by a one-time link, and a page of another origin on the same host
// (so the same site: SameSite lets the cookie go along) that tries to act with it.
describe("the dashboard's session in Chromium", { timeout: 60_000 }, () => {
  let t: TestServer;
  let directory: string;
  let chromium: Chromium;
  let attacker: Server;
  let attackerUrl: string;

  beforeAll(async () => {
    directory = fakeDashboard();
    t = await startTestServer({ dashboard: { directory } });
    chromium = await launchChromium();
    const target = t.server.url;
    attacker = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<!doctype html><title>elsewhere</title>
<form id="form" method="post" action="${target}/versions" enctype="text/plain">
<input name='{"version":"6.6.6","description":"' value='x"}'></form>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await chromium.browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await t.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it("keeps the cookie from page scripts, runs the app's own script under its policy, and refuses other pages", async (context) => {
    needChromium(context, chromium);
    const browserContext = await chromium.browser.newContext();
    try {
      const page = await browserContext.newPage();
      const code = await (await t.call("POST", "/auth/login-codes")).json();
      await page.goto(code.url);
      expect(new URL(page.url()).pathname).toBe("/ui/");
      // The app's script (from /ui/assets) ran; the cookie is there, but not for scripts.
      await page.waitForFunction(() => document.body.dataset.ran === "yes");
      const cookies = await browserContext.cookies(t.server.url);
      expect(cookies.find((each) => each.name === "cairn_session")).toMatchObject({
        httpOnly: true,
        sameSite: "Strict",
      });
      expect(await page.evaluate(() => document.cookie)).not.toContain("cairn_session");
      // Same origin, the page reads its session.
      const own = await page.evaluate(async () => {
        const answer = await fetch("/auth/session");
        return { status: answer.status, body: await answer.json() };
      });
      expect(own.status).toBe(200);
      expect(own.body.project.name).toBe("default");
      // An inline script is not the app's own: the policy blocks it (allowed, it would have
      // run as it was inserted).
      const inline = await page.evaluate(() => {
        const script = document.createElement("script");
        script.textContent = "document.body.dataset.inline = 'ran'";
        document.body.append(script);
        return document.body.dataset.inline ?? "blocked";
      });
      expect(inline).toBe("blocked");

      // Another origin on the same host: its requests carry the cookie, and are refused.
      const elsewhere = await browserContext.newPage();
      await elsewhere.goto(attackerUrl);
      const attempts = await elsewhere.evaluate(async (target) => {
        const post = await fetch(`${target}/versions`, {
          method: "POST",
          credentials: "include",
          mode: "no-cors",
          headers: { "content-type": "text/plain" },
          body: JSON.stringify({ version: "6.6.7", description: "x" }),
        }).then(
          (answer) => answer.type,
          (error: Error) => error.message,
        );
        const read = await fetch(`${target}/auth/session`, { credentials: "include" }).then(
          async (answer) => `read ${answer.status} ${await answer.text()}`,
          (error: Error) => `refused: ${error.name}`,
        );
        return { post, read };
      }, t.server.url);
      // The session (and its CSRF token) is not readable from there.
      expect(attempts.read).toMatch(/^refused/);
      expect(attempts.post).toBe("opaque");
      const submitted = elsewhere.waitForEvent("response", (response) =>
        response.url().endsWith("/versions"),
      );
      await elsewhere.evaluate(() => (document.getElementById("form") as HTMLFormElement).submit());
      const answer = await submitted;
      expect(answer.status()).toBe(403);
      const versions = await (await t.call("GET", "/versions")).json();
      expect(versions.versions).toEqual([]);
    } finally {
      await browserContext.close();
    }
  });
});
