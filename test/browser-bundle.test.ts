// The `cairn-ai` entry in a real browser: Vite bundles a tiny page that imports it, the bundle
// must not import any Node module, and Debian's chromium (driven by playwright-core, never a
// downloaded browser) runs the page against a real local collector. Pending spans must reach
// the collector when the page unloads (pagehide, fetch keepalive) and when the page awaits
// flush().
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExportBatch } from "cairn-ai";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import {
  assertBrowserSafe,
  type BuiltPage,
  buildPage,
  type Chromium,
  codeLines,
  createWorkDir,
  launchChromium,
  needChromium,
  resultPage,
  type StaticSite,
  serveStatic,
} from "./helpers/browser.js";
import { type Collector, startCollector } from "./helpers/collector.js";

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url));
const bundledSources = [
  "tracing/runtime/configure.ts",
  "tracing/runtime/lifecycle.ts",
  "tracing/export/cairn-exporter.ts",
  "tracing/context/storage.ts",
].map((path) => fileURLToPath(new URL(`../src/${path}`, import.meta.url)));

// The page: wraps a function with observe({ kind: "tool" }), calls it, and shows its result and
// trace id. The batch delay is an hour, so only Cairn's unload hooks or flush() can send the
// span. `?mode=flush` awaits flush(). In the other modes the test unloads the page, which fires
// both pagehide and visibilitychange (the tab turns hidden): `pagehide` keeps visibilitychange
// from reaching Cairn, `hidden` keeps pagehide from it, so each mode proves one hook. fetch is
// wrapped (a passthrough) to note in localStorage how the exporter called it, for the test to
// read on the next page of the same origin, after this one is gone.
const mainTs = `import { configure, currentSpan, flush, observe } from "cairn-ai";

declare const __CAIRN_ENDPOINT__: string;

interface FetchRecord {
  url: string;
  method: string;
  keepalive: boolean;
}

const realFetch = globalThis.fetch.bind(globalThis);
globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const records = JSON.parse(localStorage.getItem("fetches") ?? "[]") as FetchRecord[];
  records.push({
    url: input instanceof Request ? input.url : String(input),
    method: init?.method ?? "GET",
    keepalive: init?.keepalive === true,
  });
  localStorage.setItem("fetches", JSON.stringify(records));
  return realFetch(input, init);
};

const mode = new URLSearchParams(location.search).get("mode");
const blocked = mode === "pagehide" ? "visibilitychange" : mode === "hidden" ? "pagehide" : undefined;
if (blocked !== undefined) {
  // Added before configure() installs Cairn's hooks, so it runs first: a capturing listener on
  // window sees visibilitychange before the document does, and pagehide, fired at window,
  // before any listener added later.
  window.addEventListener(blocked, (event) => event.stopImmediatePropagation(), { capture: true });
}

configure({
  endpoint: __CAIRN_ENDPOINT__,
  apiKey: "browser-key",
  serviceName: "browser-page",
  batch: { scheduledDelayMs: 3_600_000 },
});

const lookupWeather = observe(
  function lookupWeather(city: string) {
    return { city, forecast: "sunny", traceId: currentSpan().traceId };
  },
  { kind: "tool" },
);

const answer = lookupWeather(new URLSearchParams(location.search).get("city") ?? "Oslo");
const output = document.getElementById("result") as HTMLElement;
output.textContent = answer.forecast;
output.dataset.traceId = answer.traceId;
output.dataset.ready = "true";
if (mode === "flush") {
  await flush();
  output.dataset.flushed = "true";
}
`;

const indexHtml = resultPage("cairn in a browser");

// A second page of the same origin, to unload the first one onto and read its notes.
const afterHtml = `<!doctype html>
<html><head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>after</title></head>
<body><p id="after">the first page is gone</p></body></html>
`;

interface PageRun {
  page: Page;
  errors: string[];
}

let workDir: string;
let collector: Collector;
let built: BuiltPage;
let site: StaticSite;
let siteUrl: string;
let chromium: Chromium;

beforeAll(async () => {
  collector = await startCollector();
  workDir = await createWorkDir("browser-bundle-");
  built = await buildPage({
    workDir,
    files: { "index.html": indexHtml, "main.ts": mainTs },
    alias: { "cairn-ai": entry },
    define: { __CAIRN_ENDPOINT__: JSON.stringify(collector.url) },
  });
  await writeFile(join(built.distDir, "after.html"), afterHtml);

  site = await serveStatic(built.distDir);
  siteUrl = site.url;
  chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium?.browser?.close();
  await site?.close();
  await collector?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe("the cairn entry bundled for a browser", () => {
  it("imports no Node module: no node: specifier, no builtin, no async_hooks", () => {
    const entryChunk = built.chunks.find((chunk) => chunk.isEntry);
    // The sources of the entry, not a prebuilt dist, are in the bundle.
    expect(entryChunk?.moduleIds).toEqual(expect.arrayContaining(bundledSources));

    // Nor OpenTelemetry's context manager, which is built on Node's AsyncLocalStorage.
    assertBrowserSafe(built, { forbidModule: (id) => id.includes("context-async-hooks") });
    for (const chunk of built.chunks) {
      // The one mention of async_hooks allowed is the run-time, guarded
      // process.getBuiltinModule("node:async_hooks") of tracing/context/storage.ts.
      for (const line of codeLines(chunk).filter((each) => each.includes("async_hooks"))) {
        expect(line).toMatch(/\b(?!import\b|require\b)[\w$]+\(\s*"node:async_hooks"\s*\)/);
      }
    }
  });

  it.for([
    { mode: "pagehide", city: "Oslo" },
    { mode: "hidden", city: "Bergen" },
  ] as const)(
    "sends the pending span on $mode as the page unloads, with fetch keepalive",
    { timeout: 60_000 },
    async ({ mode, city }, context) => {
      const current = await openPage(context, mode, city);
      const result = current.page.locator("#result[data-ready='true']");
      await result.waitFor();
      expect(await result.textContent()).toBe("sunny");
      const traceId = await result.getAttribute("data-trace-id");
      expect(traceId).toMatch(/^tr_[0-9a-f]{32}$/);

      // Nothing was sent while the page was shown: the batch delay is an hour.
      expect(tracesFor(traceId)).toEqual([]);

      // Unload onto a page of the same origin; the first page is gone.
      await current.page.goto(`${siteUrl}/after.html`);
      await current.page.locator("#after").waitFor();
      await collector.waitFor(() => tracesFor(traceId).length > 0);

      const [request] = tracesFor(traceId);
      expect(request?.headers["x-api-key"]).toBe("browser-key");
      expect(request?.headers["content-type"]).toBe("application/json");
      expect(request?.headers.origin).toBe(siteUrl);
      const batch = request?.json() as ExportBatch;
      expect(batch.resource).toMatchObject({ service_name: "browser-page", sdk_name: "cairn" });
      expect(batch.spans).toHaveLength(1);
      expect(batch.spans[0]).toMatchObject({
        trace_id: traceId,
        name: "lookupWeather",
        kind: "tool",
        status: "ok",
        parent_span_id: null,
      });
      expect(String(batch.spans[0]?.input)).toContain(city);
      expect(String(batch.spans[0]?.output)).toContain("sunny");

      // The page's notes, read on the next page: the export used fetch with keepalive, which
      // lets the request outlive the page.
      const notes = await current.page.evaluate(() => localStorage.getItem("fetches"));
      expect(JSON.parse(notes ?? "[]")).toEqual([
        { url: `${collector.url}/traces`, method: "POST", keepalive: true },
      ]);
      expect(current.errors).toEqual([]);
    },
  );

  it("sends the span when the page awaits flush(), without unloading", {
    timeout: 60_000,
  }, async (context) => {
    const current = await openPage(context, "flush", "Lyon");
    const result = current.page.locator("#result[data-flushed='true']");
    await result.waitFor();
    const traceId = await result.getAttribute("data-trace-id");
    expect(traceId).toMatch(/^tr_[0-9a-f]{32}$/);

    // flush() resolved in the page, so the collector has already answered.
    const requests = tracesFor(traceId);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers["x-api-key"]).toBe("browser-key");
    const batch = requests[0]?.json() as ExportBatch;
    expect(batch.resource.service_name).toBe("browser-page");
    expect(batch.spans).toHaveLength(1);
    expect(batch.spans[0]).toMatchObject({
      trace_id: traceId,
      name: "lookupWeather",
      kind: "tool",
    });
    expect(String(batch.spans[0]?.input)).toContain("Lyon");

    // An explicit flush is an ordinary request; keepalive is only for an unloading page.
    const notes = await current.page.evaluate(() => localStorage.getItem("fetches"));
    expect(JSON.parse(notes ?? "[]")).toEqual([
      { url: `${collector.url}/traces`, method: "POST", keepalive: false },
    ]);
    expect(current.errors).toEqual([]);
  });
});

/**
 * Opens the page in a context of its own, closed when the test ends. Without chromium the test
 * is skipped with the reason.
 */
async function openPage(context: TestContext, mode: string, city: string): Promise<PageRun> {
  needChromium(context, chromium);
  const browserContext = await chromium.browser.newContext();
  context.onTestFinished(() => browserContext.close());
  const page = await browserContext.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  await page.goto(`${siteUrl}/index.html?mode=${mode}&city=${city}`);
  return { page, errors };
}

/** The POST /traces requests whose spans belong to this trace. */
function tracesFor(traceId: string | null): Collector["requests"] {
  return collector.requests.filter(
    (request) =>
      request.method === "POST" &&
      request.path === "/traces" &&
      (request.json() as { spans: Array<{ trace_id: string }> }).spans.some(
        (span) => span.trace_id === traceId,
      ),
  );
}
