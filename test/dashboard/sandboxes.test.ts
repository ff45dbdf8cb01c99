// The Sandboxes and Sandbox pages in chromium against a real service with a real sandbox
// runner: create a sandbox from the page and see it running, open it, upload a file and see it
// in the file manager, run `ls` in the terminal and see the file there, follow the terminal's
// size, resize the sandbox, kill it after a confirmation and see it stopped. What the service
// refuses is shown in its words and creates nothing; a tag's value is text, never markup; the
// terminal's WebSocket opens for the dashboard's own pages only.

import type { Page } from "playwright-core";
import { describe, expect, it, type TestContext } from "vitest";
import WebSocket from "ws";
import { needSandboxes, startSandboxServer } from "../sandbox/helpers.js";
import type { TestServer } from "../server/helpers.js";
import {
  dashboardSuite,
  expectNoAxeViolations,
  onSignedInPage,
  saveScreenshot,
} from "./harness.js";

// No service where sandboxes cannot run here: each test then skips, saying why.
const suite = dashboardSuite(
  () => startSandboxServer() as Promise<TestServer>,
  async () => undefined,
);

/** `path` signed in, handed to `use` with the service, where chromium and sandboxes can run. */
function onSandboxesPage(
  context: TestContext,
  path: string,
  use: (page: Page, t: TestServer) => Promise<void>,
  allowed?: RegExp,
): Promise<void> {
  needSandboxes(context, suite.t as TestServer | undefined);
  return onSignedInPage(context, suite, path, (page) => use(page, suite.t), allowed);
}

/** The text the terminal shows (xterm's rows, as a reader sees them). */
function terminalText(page: Page): Promise<string> {
  return page.locator(".xterm-rows").innerText();
}

/** The rows and columns the shell's terminal has, as `stty size` reports them. */
async function shellSize(page: Page, marker: string): Promise<[number, number]> {
  await page.keyboard.type(`echo ${marker}-$(stty size | tr ' ' x)-end`);
  await page.keyboard.press("Enter");
  const pattern = new RegExp(`${marker}-(\\d+)x(\\d+)-end`);
  await expect
    .poll(async () => pattern.test(await terminalText(page)), { timeout: 15_000 })
    .toBe(true);
  const [, rows, cols] = pattern.exec(await terminalText(page)) as RegExpExecArray;
  return [Number(rows), Number(cols)];
}

async function sandboxCount(t: TestServer): Promise<number> {
  const answer = (await (await t.call("GET", "/api/sandboxes")).json()) as { sandboxes: unknown[] };
  return answer.sandboxes.length;
}

describe("the Sandboxes and Sandbox pages", () => {
  it("create a sandbox, upload a file, run ls in its terminal, resize it and kill it", async (context) => {
    // The upload asks whether its name is free with GET …/files/stat: the 404 that says it is,
    // chromium logs as a failed load. Nothing else may be logged.
    const freeName = /status of 404 .*\/files\/stat\?path=%2Fworkspace%2Fhello-dashboard\.txt$/;
    await onSandboxesPage(
      context,
      "/sandboxes",
      async (page, t) => {
        await expect
          .poll(() => page.getByRole("heading", { name: "Sandboxes", level: 1 }).count())
          .toBe(1);

        // Create one from the page, by keyboard where a person would type.
        const form = page.getByRole("region", { name: "New sandbox" });
        await form.getByLabel("Memory").selectOption({ label: "1 GB" });
        await form.getByLabel("Lifetime").selectOption({ label: "15 minutes" });
        await form.getByLabel("Tags").fill("team=dashboard\nsuite=sandboxes");
        await form.getByRole("button", { name: "Create sandbox" }).click();
        const created = form.getByRole("status").filter({ hasText: "Created" });
        await expect
          .poll(() => created.textContent(), { timeout: 60_000 })
          .toMatch(/Created sbx_[0-9a-f]{24} \(running\)/);
        const sandboxId = ((await created.textContent()) ?? "").match(
          /sbx_[0-9a-f]{24}/,
        )?.[0] as string;

        // It is in the list, running, with its template, size and tags.
        const row = page
          .getByRole("row")
          .filter({ has: page.getByRole("link", { name: sandboxId }) });
        await expect.poll(() => row.count()).toBe(1);
        expect(await row.getByRole("cell").allInnerTexts()).toEqual(
          expect.arrayContaining(["running", "base", "1 vCPU · 1 GB"]),
        );
        expect(await row.innerText()).toContain("team=dashboard");

        // Usage by tag: the first tag key of the list, with this sandbox's team.
        const usage = page.getByRole("region", { name: "Usage by tag" });
        expect(await usage.getByLabel("Tag key").inputValue()).toBe("suite");
        await usage.getByLabel("Tag key").fill("team");
        await expect
          .poll(() => usage.getByRole("rowheader", { name: "dashboard" }).count())
          .toBe(1);
        await expect.poll(() => page.url()).toMatch(/usage=team/);

        await expectNoAxeViolations(page, "the sandboxes page");
        await saveScreenshot(page, "sandboxes");

        // Open it.
        await row.getByRole("link", { name: sandboxId }).click();
        await expect
          .poll(() => page.getByRole("heading", { name: `Sandbox ${sandboxId}`, level: 1 }).count())
          .toBe(1);
        const status = page.getByRole("region", { name: "Sandbox status" });
        await expect.poll(() => status.innerText(), { timeout: 20_000 }).toContain("running");

        // Upload a file with CairnUpload, as a person picks one.
        const chooser = page.waitForEvent("filechooser");
        await page
          .getByRole("region", { name: "Upload files" })
          .getByRole("button")
          .first()
          .click();
        await (await chooser).setFiles({
          name: "hello-dashboard.txt",
          mimeType: "text/plain",
          buffer: Buffer.from("uploaded from the dashboard\n"),
        });
        await expect
          .poll(
            () =>
              page
                .getByRole("list", { name: "Uploads" })
                .getByText("Uploaded to /workspace/hello-dashboard.txt")
                .count(),
            {
              timeout: 20_000,
            },
          )
          .toBe(1);
        // The file manager shows it.
        const files = page.getByRole("grid", { name: /^Files in/ });
        await expect
          .poll(() => files.getByRole("row", { name: /hello-dashboard\.txt/ }).count(), {
            timeout: 20_000,
          })
          .toBe(1);

        // The terminal: a shell in /workspace; ls shows the file.
        await page.getByRole("button", { name: "Open terminal" }).click();
        await expect
          .poll(() => page.getByText("Connected: a shell in /workspace.").count(), {
            timeout: 30_000,
          })
          .toBe(1);
        const input = page.getByRole("textbox", { name: `Terminal: a shell in ${sandboxId}` });
        await expect
          .poll(() => input.evaluate((element) => element === document.activeElement))
          .toBe(true);
        await page.keyboard.type("ls");
        await page.keyboard.press("Enter");
        await expect
          .poll(() => terminalText(page), { timeout: 20_000 })
          .toMatch(/hello-dashboard\.txt/);

        // The shell's terminal follows the page's: narrower page, fewer columns.
        const [rowsBefore, colsBefore] = await shellSize(page, "wide");
        await page.setViewportSize({ width: 900, height: 900 });
        await expect
          .poll(async () => (await shellSize(page, `narrow${Date.now()}`))[1], { timeout: 20_000 })
          .toBeLessThan(colsBefore);
        expect(rowsBefore).toBeGreaterThan(5);
        await page.setViewportSize({ width: 1360, height: 900 });

        // Escape, then Tab, leaves the terminal (Tab alone goes to the shell).
        await input.focus();
        await page.keyboard.press("Tab");
        expect(await input.evaluate((element) => element === document.activeElement)).toBe(true);
        await page.keyboard.press("Escape");
        await page.keyboard.press("Tab");
        expect(await input.evaluate((element) => element === document.activeElement)).toBe(false);

        // xterm's screen-reader mode: the terminal's lines as text a screen reader can walk.
        await page.getByRole("checkbox", { name: "Screen reader mode" }).check();
        await expect
          .poll(() => page.locator(".xterm-accessibility-tree").innerText())
          .toMatch(/hello-dashboard\.txt/);

        await expectNoAxeViolations(page, "the sandbox page, terminal open");
        // The whole page in one picture: state, files and the terminal.
        await page.setViewportSize({ width: 1360, height: 1700 });
        await page.evaluate(() => window.scrollTo(0, 0));
        await saveScreenshot(page, "sandbox");
        await page.setViewportSize({ width: 1360, height: 900 });

        // One shell for one terminal; its exit is shown, and a new one can be started.
        const execs = async () =>
          (
            (await (await t.call("GET", `/api/sandboxes/${sandboxId}/exec`)).json()) as {
              execs: { state: string; exitCode: number | null; signal: string | null }[];
            }
          ).execs;
        expect((await execs()).map((exec) => exec.state)).toEqual(["running"]);
        await input.focus();
        await page.keyboard.type("exit 3");
        await page.keyboard.press("Enter");
        await expect
          .poll(() => page.getByText("The shell exited with code 3.").count(), { timeout: 20_000 })
          .toBe(1);
        await page.getByRole("button", { name: "New shell" }).click();
        await expect
          .poll(() => page.getByText("Connected: a shell in /workspace.").count(), {
            timeout: 30_000,
          })
          .toBe(1);
        // Hanging up sends the shell SIGHUP, as closing a terminal window does.
        await page.getByRole("button", { name: "Hang up" }).click();
        await expect.poll(() => page.getByText("Hung up.").count()).toBe(1);
        await expect
          .poll(
            async () => (await execs()).map((exec) => [exec.state, exec.exitCode ?? exec.signal]),
            {
              timeout: 20_000,
            },
          )
          .toEqual(
            expect.arrayContaining([
              ["exited", 3],
              ["exited", "SIGHUP"],
            ]),
          );

        // Resize: 2 vCPUs and 4 GB, live.
        const sizing = page.getByRole("region", { name: "Size and lifetime" });
        await sizing.getByLabel("CPUs").selectOption({ label: "2 vCPUs" });
        await sizing.getByLabel("Memory").selectOption({ label: "4 GB" });
        await sizing.getByRole("button", { name: "Resize" }).click();
        await expect
          .poll(() => sizing.getByText("Resized to 2 vCPUs · 4 GB.").count(), { timeout: 20_000 })
          .toBe(1);
        const record = (await (await t.call("GET", `/api/sandboxes/${sandboxId}`)).json()) as {
          cpuCount: number;
          memoryMB: number;
        };
        expect([record.cpuCount, record.memoryMB]).toEqual([2, 4096]);

        // In the dark theme too.
        await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
        await expectNoAxeViolations(page, "the sandbox page, dark");
        await saveScreenshot(page, "sandbox-dark");
        await page.getByRole("combobox", { name: "Theme" }).selectOption("light");

        // Kill: a confirmation that Escape cancels, giving the focus back; then confirmed.
        const kill = page.getByRole("button", { name: "Kill sandbox" });
        await kill.click();
        const dialog = page.getByRole("alertdialog", { name: `Kill sandbox ${sandboxId}?` });
        await expect.poll(() => dialog.count()).toBe(1);
        expect(
          await dialog
            .getByRole("button", { name: "Cancel" })
            .evaluate((element) => element === document.activeElement),
        ).toBe(true);
        await expectNoAxeViolations(page, "the kill dialog");
        await page.keyboard.press("Escape");
        await expect.poll(() => dialog.count()).toBe(0);
        expect(await kill.evaluate((element) => element === document.activeElement)).toBe(true);
        expect((await (await t.call("GET", `/api/sandboxes/${sandboxId}`)).json()).status).toBe(
          "running",
        );

        await kill.click();
        await dialog.getByRole("button", { name: "Kill sandbox" }).click();
        await expect.poll(() => dialog.count(), { timeout: 30_000 }).toBe(0);
        await expect
          .poll(() => page.getByText("This sandbox has stopped").count(), { timeout: 30_000 })
          .toBe(1);
        await expect.poll(() => status.innerText(), { timeout: 20_000 }).toContain("stopped");
        expect((await (await t.call("GET", `/api/sandboxes/${sandboxId}`)).json()).status).toBe(
          "stopped",
        );

        // The list says so too.
        await page
          .getByRole("navigation", { name: "Sections" })
          .getByRole("link", { name: "Sandboxes" })
          .click();
        await expect.poll(() => row.getByText("stopped").count()).toBe(1);
        expect(await row.getByRole("button", { name: `Kill ${sandboxId}` }).count()).toBe(0);
      },
      freeName,
    );
  }, 240_000);

  it("shows sandboxes made elsewhere as they come, kills one from the list, and shows what the service refuses", async (context) => {
    await onSandboxesPage(
      context,
      "/sandboxes?status=running",
      async (page, t) => {
        await expect
          .poll(() => page.getByRole("heading", { name: "All sandboxes" }).count())
          .toBe(1);
        await expect.poll(() => page.getByLabel("Status").inputValue()).toBe("running");
        // Made with the API while the page is open: it shows up by itself (the project's events).
        // A tag's value is text on the page, never markup.
        const markup = `<img src=x onerror="document.title='pwned'">`;
        const made = await t.call("POST", "/api/sandboxes", { tags: { note: markup } });
        expect(made.status).toBe(201);
        const { id } = (await made.json()) as { id: string };
        const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: id }) });
        await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
        expect(await row.getByText(`note=${markup}`).count()).toBe(1);
        expect(await page.title()).not.toBe("pwned");
        expect(await row.locator("img").count()).toBe(0);

        // Killed from the list, after the confirmation: it leaves the running ones.
        await row.getByRole("button", { name: `Kill ${id}` }).click();
        const dialog = page.getByRole("alertdialog", { name: `Kill sandbox ${id}?` });
        await dialog.getByRole("button", { name: "Kill sandbox" }).click();
        await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(0);
        await expect
          .poll(
            async () =>
              ((await (await t.call("GET", `/api/sandboxes/${id}`)).json()) as { status: string })
                .status,
            {
              timeout: 30_000,
            },
          )
          .toBe("stopped");
        // The focus is not lost with the row's button: it goes to the page.
        expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");

        // Refusals: the form's own for a tag line without "=", the service's for the rest, in
        // its words; nothing is created.
        const before = await sandboxCount(t);
        const form = page.getByRole("region", { name: "New sandbox" });
        const create = form.getByRole("button", { name: "Create sandbox" });
        await form.getByLabel("Tags").fill("team=search\nnovalue");
        await create.click();
        await expect
          .poll(() => form.getByRole("alert").textContent())
          .toBe("Tags, line 2 (“novalue”): write each tag as key=value, one a line");
        expect(await form.getByLabel("Tags").getAttribute("aria-invalid")).toBe("true");

        await form.getByLabel("Tags").fill("bad key=1");
        await create.click();
        await expect
          .poll(() => form.getByRole("alert").textContent(), { timeout: 20_000 })
          .toMatch(/^Could not create the sandbox \(400\): field "tags\.bad key": /);

        await form.getByLabel("Tags").fill("");
        await form.getByLabel("Template").fill("no-such-template");
        await create.click();
        await expect
          .poll(() => form.getByRole("alert").textContent(), { timeout: 20_000 })
          .toContain('no template "no-such-template"; the templates are base');
        expect(await sandboxCount(t)).toBe(before);
        await expectNoAxeViolations(page, "the sandboxes page, a refusal shown");
      },
      // The refusals, as chromium logs them.
      /status of 400/,
    );
  }, 120_000);

  it("opens the terminal's WebSocket for the dashboard's own pages only", async (context) => {
    await onSandboxesPage(context, "/sandboxes", async (page, t) => {
      const made = (await (await t.call("POST", "/api/sandboxes", {})).json()) as { id: string };
      const started = await t.call("POST", `/api/sandboxes/${made.id}/exec`, {
        cmd: "/bin/sh",
        args: ["-i"],
        pty: { cols: 80, rows: 24 },
      });
      expect(started.status).toBe(201);
      const { execId } = (await started.json()) as { execId: string };
      const cookies = await page.context().cookies(t.server.url);
      const cookie = cookies.map((each) => `${each.name}=${each.value}`).join("; ");
      expect(cookie).toContain("=");
      const url = `${t.server.url.replace(/^http/, "ws")}/api/sandboxes/${made.id}/exec/${execId}`;
      const attempt = (origin: string | undefined) =>
        new Promise<number>((resolve, reject) => {
          const socket = new WebSocket(url, {
            headers: { cookie, ...(origin === undefined ? {} : { origin }) },
          });
          socket.on("open", () => {
            socket.close();
            resolve(101);
          });
          socket.on("unexpected-response", (_request, response) =>
            resolve(response.statusCode ?? 0),
          );
          socket.on("error", reject);
        });
      // Another site's page, riding on the cookie: refused. No Origin at all: refused too.
      expect(await attempt("http://evil.example")).toBe(403);
      expect(await attempt(undefined)).toBe(403);
      // The dashboard's own origin: let in.
      expect(await attempt(new URL(t.server.url).origin)).toBe(101);
      await t.call("DELETE", `/api/sandboxes/${made.id}`);
    });
  }, 60_000);
});
