// The `cairn` entry in a real browser: Vite bundles a tiny page that imports it, the bundle
// must not import any Node module, and Debian's chromium (driven by playwright-core, never a
// downloaded browser) runs the page against a real local collector. Pending spans must reach
// the collector when the page unloads (pagehide, fetch keepalive) and when the page awaits
// flush().
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { builtinModules } from "node:module";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExportBatch } from "cairn";
import { type Browser, chromium, type Page } from "playwright-core";
import { build, createLogger, type Rolldown } from "vite";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { type Collector, startCollector } from "./helpers/collector.js";

const chromiumPath = "/usr/bin/chromium";
const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url));
const bundledSources = [
  "tracing/runtime/configure.ts",
  "tracing/runtime/lifecycle.ts",
  "tracing/export/cairn-exporter.ts",
  "tracing/context/storage.ts",
].map((path) => fileURLToPath(new URL(`../src/${path}`, import.meta.url)));
const tmpRoot = fileURLToPath(new URL("./.tmp/", import.meta.url));

// The page: wraps a function with observe({ kind: "tool" }), calls it, and shows its result and
// trace id. The batch delay is an hour, so only Cairn's unload hooks or flush() can send the
// span. `?mode=flush` awaits flush(). In the other modes the test unloads the page, which fires
// both pagehide and visibilitychange (the tab turns hidden): `pagehide` keeps visibilitychange
// from reaching Cairn, `hidden` keeps pagehide from it, so each mode proves one hook. fetch is
// wrapped (a passthrough) to note in localStorage how the exporter called it, for the test to
// read on the next page of the same origin, after this one is gone.
const mainTs = `import { configure, currentSpan, flush, observe } from "cairn";

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

const indexHtml = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <title>cairn in a browser</title>
  </head>
  <body>
    <output id="result"></output>
    <script type="module" src="./main.ts"></script>
  </body>
</html>
`;

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
let distDir: string;
let collector: Collector;
let site: Server;
let siteUrl: string;
let chunks: Rolldown.OutputChunk[];
const buildWarnings: string[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  collector = await startCollector();
  await mkdir(tmpRoot, { recursive: true });
  workDir = await mkdtemp(join(tmpRoot, "browser-bundle-"));
  distDir = join(workDir, "dist");
  await writeFile(join(workDir, "index.html"), indexHtml);
  await writeFile(join(workDir, "main.ts"), mainTs);

  const logger = createLogger("warn");
  const warn = logger.warn;
  logger.warn = (message, options) => {
    buildWarnings.push(message);
    warn(message, options);
  };
  const result = await build({
    configFile: false,
    root: workDir,
    logLevel: "warn",
    customLogger: logger,
    resolve: { alias: [{ find: /^cairn$/, replacement: entry }] },
    define: { __CAIRN_ENDPOINT__: JSON.stringify(collector.url) },
    build: { outDir: distDir, emptyOutDir: true, minify: false, write: true },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  chunks = outputs.flatMap((output) =>
    output.output.filter((item): item is Rolldown.OutputChunk => item.type === "chunk"),
  );
  await writeFile(join(distDir, "after.html"), afterHtml);

  site = await serveStatic(distDir);
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  if (existsSync(chromiumPath)) {
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: chromiumArgs,
    });
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (site !== undefined) {
    site.closeAllConnections();
    await new Promise<void>((resolve) => site.close(() => resolve()));
  }
  await collector?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe("the cairn entry bundled for a browser", () => {
  it("imports no Node module: no node: specifier, no builtin, no async_hooks", () => {
    expect(chunks.length).toBeGreaterThan(0);
    const entryChunk = chunks.find((chunk) => chunk.isEntry);
    // The sources of the entry, not a prebuilt dist, are in the bundle.
    expect(entryChunk?.moduleIds).toEqual(expect.arrayContaining(bundledSources));

    const builtins = new Set(builtinModules);
    for (const chunk of chunks) {
      // The code without its comment lines (JSDoc kept by minify: false may name anything).
      const codeLines = chunk.code.split("\n").filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
      const code = codeLines.join("\n");
      const specifiers = [...chunk.imports, ...chunk.dynamicImports, ...importSpecifiers(code)];
      // Every import of the bundle is one of its own chunks.
      const foreign = specifiers.filter(
        (specifier) =>
          !/^\.{1,2}\//.test(specifier) && !chunks.some((c) => c.fileName === specifier),
      );
      expect(foreign, `${chunk.fileName} imports`).toEqual([]);
      expect(
        specifiers.filter(
          (specifier) =>
            specifier.startsWith("node:") ||
            builtins.has(specifier) ||
            specifier.includes("async_hooks"),
        ),
        `${chunk.fileName} imports`,
      ).toEqual([]);
      // Vite swaps a Node module imported in a browser build for an empty stub.
      expect(
        chunk.moduleIds.filter(
          (id) =>
            id.includes("__vite-browser-external") ||
            id.startsWith("node:") ||
            id.includes("context-async-hooks"),
        ),
        `${chunk.fileName} modules`,
      ).toEqual([]);
      // The one mention of async_hooks allowed is the run-time, guarded
      // process.getBuiltinModule("node:async_hooks") of tracing/context/storage.ts.
      for (const line of codeLines.filter((each) => each.includes("async_hooks"))) {
        expect(line).toMatch(/\b(?!import\b|require\b)[\w$]+\(\s*"node:async_hooks"\s*\)/);
      }
      expect(code).not.toMatch(/\brequire\s*\(/);
    }
    expect(buildWarnings.filter((message) => /externalized|browser compat/i.test(message))).toEqual(
      [],
    );
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
 * is skipped with the reason printed, except on CI, where it fails.
 */
async function openPage(context: TestContext, mode: string, city: string): Promise<PageRun> {
  if (browser === undefined) {
    const reason = `chromium is not installed at ${chromiumPath}`;
    if (process.env.CI === "true") throw new Error(`${reason}; CI must run the browser tests`);
    console.warn(`browser-bundle.test.ts: skipped: ${reason}`);
    context.skip(reason);
  }
  const browserContext = await browser.newContext();
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

/** Import specifiers written in the code: static, re-export, side-effect, dynamic, require. */
function importSpecifiers(code: string): string[] {
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*["'`]([^"'`]+)["'`]/g,
    /\bimport\s*["'`]([^"'`]+)["'`]/g,
    /\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g,
    /\brequire\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g,
  ];
  return patterns.flatMap((pattern) =>
    [...code.matchAll(pattern)].map((match) => match[1] as string),
  );
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

/** Serves the files of `root` on 127.0.0.1, on a port of the system's choosing. */
async function serveStatic(root: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(root + sep)) {
      response.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) => {
        response.writeHead(200, {
          "content-type": contentTypes[extname(file)] ?? "application/octet-stream",
          "cache-control": "no-store",
        });
        response.end(body);
      },
      () => response.writeHead(404).end(),
    );
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return server;
}
