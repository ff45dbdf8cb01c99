// End to end: the example app (examples/react-app, built by Vite) in Debian's chromium against
// a real Cairn service with a real sandbox, and a local OpenAI-compatible model server that
// answers with a tool call. A user uploads a file, sees it in the file manager, renames it, asks
// the chat to run a command and sees its output stream in the tool card, and sees the status
// change. A screenshot of each component goes to test/.artifacts/ (ignored by git).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../examples/react-app/server.js";
import { type Chromium, launchChromium, needChromium } from "./helpers/browser.js";
import { buildExamplePage, openExamplePage, statusWithHost } from "./helpers/example-app.js";
import { type FakeOpenAI, startFakeOpenAI } from "./helpers/fake-openai.js";
import { needSandboxes, startSandboxServer } from "./sandbox/helpers.js";
import type { TestServer } from "./server/helpers.js";

const artifacts = fileURLToPath(new URL("./.artifacts/", import.meta.url));

// The command the model asks for: output in three steps, so the card shows it arriving.
const command = "for i in 1 2 3; do echo line-$i; sleep 0.5; done; cat renamed.txt";

const suite = {
  t: undefined as TestServer | undefined,
  chromium: { reason: "not launched" } as Chromium,
  model: undefined as FakeOpenAI | undefined,
  app: undefined as ExampleApp | undefined,
  page: undefined as Page | undefined,
  errors: [] as string[],
};

beforeAll(async () => {
  suite.chromium = await launchChromium();
  suite.t = await startSandboxServer();
  if (suite.chromium.browser !== undefined && suite.t !== undefined) {
    suite.model = await startFakeOpenAI(
      [
        {
          toolCalls: [
            { id: "call_1", name: "sandbox_exec", arguments: JSON.stringify({ command }) },
          ],
        },
        { text: "The file says **hello from the browser**." },
      ],
      { chunkDelayMs: 5 },
    );
    const staticDir = await buildExamplePage("react-app-");
    suite.app = await startExampleApp({
      cairnUrl: suite.t.server.url,
      cairnApiKey: suite.t.apiKey,
      modelBaseURL: suite.model.baseURL,
      model: "fake-model",
      staticDir,
    });
    await mkdir(artifacts, { recursive: true });
    const opened = await openExamplePage(suite.chromium.browser as Browser, suite.app.url, {
      width: 1280,
      height: 1000,
    });
    suite.page = opened.page;
    suite.errors = opened.errors;
  }
}, 120_000);

afterAll(async () => {
  await suite.page?.close();
  await suite.app?.close();
  await suite.model?.close();
  await suite.chromium.browser?.close();
  await suite.t?.stop();
});

describe("the example app in chromium, on a real sandbox", { timeout: 60_000 }, () => {
  it("shows the sandbox running", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const page = suite.page as Page;
    const status = page.getByTestId("status");
    await expect.poll(() => status.innerText(), { timeout: 20_000 }).toMatch(/running/i);
  });

  it("uploads a file into the sandbox, and the file manager shows it", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const page = suite.page as Page;
    await page
      .locator(".cairn-upload input[type=file]")
      .first()
      .setInputFiles({
        name: "notes.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("hello from the browser\n"),
      });
    const files = page.getByTestId("files");
    await expect
      .poll(() => files.getByRole("row", { name: /notes\.txt/ }).count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(await suite.app?.sandbox?.files.readText("notes.txt")).toBe("hello from the browser\n");
    await page
      .locator(".cairn-upload")
      .first()
      .screenshot({ path: join(artifacts, "cairn-upload.png") });
  });

  it("renames it with F2", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const page = suite.page as Page;
    const files = page.getByTestId("files");
    await files
      .getByRole("row", { name: /notes\.txt/ })
      .first()
      .click();
    await page.keyboard.press("F2");
    const input = files.getByRole("textbox", { name: /name/i });
    await input.fill("renamed.txt");
    await input.press("Enter");
    await expect
      .poll(() => files.getByRole("row", { name: /renamed\.txt/ }).count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(await suite.app?.sandbox?.files.readText("renamed.txt")).toBe(
      "hello from the browser\n",
    );
    await page
      .locator(".cairn-file-manager")
      .first()
      .screenshot({
        path: join(artifacts, "cairn-file-manager.png"),
      });
  });

  it("runs the command the model asks for, its output streaming into the tool card", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const page = suite.page as Page;
    const chat = page.getByTestId("chat");
    const status = page.getByTestId("status");
    await chat.getByRole("textbox", { name: "Message" }).fill("What does renamed.txt say?");
    await chat.getByRole("textbox", { name: "Message" }).press("Enter");
    // The first line shows while the command still runs (no exit code yet), and the status
    // counts the running command.
    await expect.poll(() => chat.innerText(), { timeout: 20_000 }).toContain("line-1");
    const early = await chat.innerText();
    expect(early).not.toContain("line-3");
    await expect.poll(() => status.innerText(), { timeout: 10_000 }).toContain("line-$i");
    await status.screenshot({ path: join(artifacts, "cairn-status.png") });
    await expect.poll(() => chat.innerText(), { timeout: 20_000 }).toContain("line-3");
    await expect
      .poll(() => chat.innerText(), { timeout: 20_000 })
      .toMatch(/exit(ed)?( code)?:? 0/i);
    await expect
      .poll(() => chat.innerText(), { timeout: 20_000 })
      .toContain("The file says hello from the browser.");
    await chat.screenshot({ path: join(artifacts, "cairn-chat.png") });
    // The model got the command's output back.
    const second = suite.model?.requests[1]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(JSON.stringify(second.messages.filter((message) => message.role === "tool"))).toContain(
      "hello from the browser",
    );
    // The exec is over: the status no longer lists it.
    await expect.poll(() => status.innerText(), { timeout: 10_000 }).not.toContain("line-$i");
  });

  it("says which model did not answer, when it does not, with a retry", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const page = suite.page as Page;
    const chat = page.getByTestId("chat");
    // The model server's script has run out: it answers 500 from now on.
    await chat.getByRole("textbox", { name: "Message" }).fill("And now?");
    await chat.getByRole("textbox", { name: "Message" }).press("Enter");
    await expect
      .poll(() => chat.innerText(), { timeout: 20_000 })
      .toMatch(/The model at http:\/\/127\.0\.0\.1:\d+\/v1 did not answer/);
    expect(await chat.getByRole("button", { name: /retry/i }).count()).toBeGreaterThan(0);
  });

  it("gives a token only to its own origin: another Host (a rebound DNS name) gets 421", async (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    const url = suite.app?.url as string;
    const host = `evil.example:${new URL(url).port}`;
    expect(await statusWithHost(url, { method: "GET", path: "/api/session", host })).toBe(421);
  });

  it("logged no error in the page", (context) => {
    needChromium(context, suite.chromium);
    needSandboxes(context, suite.t);
    // Chromium logs every 404, and the upload asks whether a file exists before it writes it
    // (its conflict policy): that one 404 is the answer "no", not an error.
    const conflictCheck = /status of 404 .*\/files\/stat\?path=%2Fworkspace%2Fnotes\.txt$/;
    expect(suite.errors.filter((error) => !conflictCheck.test(error))).toEqual([]);
  });
});
