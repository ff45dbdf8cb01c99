// What the end-to-end tests of the example app (examples/react-app) share: its page built by
// Vite into a temporary folder, the page opened in chromium with its errors collected, and a
// request to its backend under a Host header of the test's choosing.
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import { createWorkDir } from "./browser.js";

const exampleConfig = fileURLToPath(
  new URL("../../examples/react-app/vite.config.ts", import.meta.url),
);

/** Builds the example's page into a fresh folder under test/.tmp; returns its dist folder. */
export async function buildExamplePage(prefix: string): Promise<string> {
  const distDir = join(await createWorkDir(prefix), "dist");
  await build({
    configFile: exampleConfig,
    logLevel: "warn",
    build: { outDir: distDir, emptyOutDir: true },
  });
  return distDir;
}

/** A new page on `url`; `errors` collects its uncaught errors and console errors. */
export async function openExamplePage(
  browser: Browser,
  url: string,
  viewport: { width: number; height: number },
  beforeLoad: (page: Page) => void = () => undefined,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${message.text()} ${message.location().url}`);
  });
  beforeLoad(page);
  await page.goto(url);
  return { page, errors };
}

/** The status the app's backend at `appUrl` answers, asked with this Host header. */
export function statusWithHost(
  appUrl: string,
  options: { method: "GET" | "POST"; path: string; host: string; body?: string },
): Promise<number | undefined> {
  const { port } = new URL(appUrl);
  const { method, path, host, body = "" } = options;
  return new Promise((resolve, reject) => {
    const asked = request({ host: "127.0.0.1", port, path, method, headers: { host } });
    asked.on("response", (answer) => {
      answer.resume();
      resolve(answer.statusCode);
    });
    asked.on("error", reject);
    asked.end(body);
  });
}
