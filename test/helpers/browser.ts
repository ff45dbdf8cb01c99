// What the browser tests share: a page built by Vite into a temporary folder, the checks that
// its bundle imports no Node module, a static server for the built page, and Debian's chromium
// driven by playwright-core (never a downloaded browser).
import { accessSync, constants } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { builtinModules } from "node:module";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { build, createLogger, type Rolldown } from "vite";
import { expect, type TestContext } from "vitest";

const tmpRoot = fileURLToPath(new URL("../.tmp/", import.meta.url));

/** A fresh folder under test/.tmp (ignored by git), named `prefix` and a random suffix. */
export async function createWorkDir(prefix: string): Promise<string> {
  await mkdir(tmpRoot, { recursive: true });
  return mkdtemp(join(tmpRoot, prefix));
}

export interface BuildPageOptions {
  /** The folder to write the page's files into; the build goes to its `dist`. */
  workDir: string;
  /** The page's sources by file name, such as `index.html` and the `main.ts` it loads. */
  files: Record<string, string>;
  /**
   * Bare specifiers the page imports, each with the source file it stands for. Each matches
   * the whole specifier only: Vite's own object form would also take `cairn-ai/…` for `cairn-ai`.
   */
  alias: Record<string, string>;
  /** Vite's `define`: names replaced in the page's code, each by the JS expression given. */
  define?: Record<string, string>;
}

export interface BuiltPage {
  /** Where the built page is, for {@link serveStatic}. */
  distDir: string;
  /** The bundle's JS chunks. */
  chunks: Rolldown.OutputChunk[];
  /** What Vite warned of during the build: it warns of a Node module it had to stub out. */
  warnings: string[];
}

/** Writes the page's files into `workDir` and builds them with Vite, unminified. */
export async function buildPage(options: BuildPageOptions): Promise<BuiltPage> {
  const { workDir, files, alias, define } = options;
  const distDir = join(workDir, "dist");
  for (const [name, text] of Object.entries(files)) await writeFile(join(workDir, name), text);

  const warnings: string[] = [];
  const logger = createLogger("warn");
  const warn = logger.warn;
  logger.warn = (message, warnOptions) => {
    warnings.push(message);
    warn(message, warnOptions);
  };
  const result = await build({
    configFile: false,
    root: workDir,
    logLevel: "warn",
    customLogger: logger,
    resolve: {
      alias: Object.entries(alias).map(([specifier, replacement]) => ({
        find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
        replacement,
      })),
    },
    ...(define === undefined ? {} : { define }),
    // Unminified, so that the checks can read the code line by line.
    build: { outDir: distDir, emptyOutDir: true, minify: false, write: true },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((output) =>
    output.output.filter((item): item is Rolldown.OutputChunk => item.type === "chunk"),
  );
  return { distDir, chunks, warnings };
}

/**
 * The lines of a chunk's code without its comment lines: the JSDoc that an unminified build
 * keeps may name any module.
 */
export function codeLines(chunk: Rolldown.OutputChunk): string[] {
  return chunk.code.split("\n").filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
}

export interface BrowserSafeOptions {
  /** Further modules that must not be in any chunk, beyond Node's and Vite's stubs of them. */
  forbidModule?: (id: string) => boolean;
}

/**
 * Asserts that a built page imports no Node module: every import of the bundle is one of its
 * own chunks, no specifier is a `node:` one, a builtin or async_hooks, Vite stubbed no Node
 * module out, the code calls no require(), and Vite warned of no module it externalized.
 */
export function assertBrowserSafe(page: BuiltPage, options: BrowserSafeOptions = {}): void {
  const { chunks, warnings } = page;
  const { forbidModule = () => false } = options;
  // Without chunks, every check below would pass on nothing.
  expect(chunks.length).toBeGreaterThan(0);
  const builtins = new Set(builtinModules);
  for (const chunk of chunks) {
    const code = codeLines(chunk).join("\n");
    const specifiers = [...chunk.imports, ...chunk.dynamicImports, ...importSpecifiers(code)];
    // Every import of the bundle is one of its own chunks.
    const foreign = specifiers.filter(
      (specifier) => !/^\.{1,2}\//.test(specifier) && !chunks.some((c) => c.fileName === specifier),
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
          id.includes("__vite-browser-external") || id.startsWith("node:") || forbidModule(id),
      ),
      `${chunk.fileName} modules`,
    ).toEqual([]);
    expect(code).not.toMatch(/\brequire\s*\(/);
  }
  expect(warnings.filter((message) => /externalized|browser compat/i.test(message))).toEqual([]);
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

/** A test page: it loads ./main.ts, which shows what it found in `<output id="result">`. */
export function resultPage(title: string): string {
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <title>${title}</title>
  </head>
  <body>
    <output id="result"></output>
    <script type="module" src="./main.ts"></script>
  </body>
</html>
`;
}

/**
 * The end of a page's main.ts that defines `async function main()`: its result (or its error as
 * `{ error }`) as JSON in #result, then `data-done="true"` for the test to wait on.
 */
export const reportMainResult = `main().then(
  (summary) => {
    output.textContent = JSON.stringify(summary);
    output.dataset.done = "true";
  },
  (error: unknown) => {
    const message = error instanceof Error ? \`\${error.name}: \${error.message}\` : String(error);
    output.textContent = JSON.stringify({ error: message });
    output.dataset.done = "true";
  },
);
`;

export interface StaticSite {
  /** The site's origin, `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /** Stops the server, dropping the connections the browser keeps open. */
  close(): Promise<void>;
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

/** Serves the files of `root` on 127.0.0.1, on a port of the system's choosing. */
export async function serveStatic(root: string): Promise<StaticSite> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    // Nothing outside `root`, whatever `..` the path holds.
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      // Keep-alive connections would hold close() open until they time out.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Debian's chromium: the tests never download a browser. */
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

/** A launched chromium, or why there is none. */
export type Chromium =
  | { browser: Browser; reason?: undefined }
  | { browser?: undefined; reason: string };

/**
 * Launches chromium headless through playwright-core. Where it is not installed, this returns
 * the reason rather than throwing, so that the tests that need no browser still run; the others
 * call {@link needChromium}.
 */
export async function launchChromium(): Promise<Chromium> {
  try {
    accessSync(chromiumPath, constants.X_OK);
  } catch {
    return { reason: `chromium is not installed at ${chromiumPath} (Debian package chromium)` };
  }
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
  });
  return { browser };
}

/** Skips the test, with the reason, where chromium could not be launched. */
export function needChromium(
  context: TestContext,
  launched: Chromium,
): asserts launched is { browser: Browser } {
  if (launched.browser === undefined) context.skip(launched.reason);
}
