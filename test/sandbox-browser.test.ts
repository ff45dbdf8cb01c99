// `cairn/sandbox` in a real browser, against a real Cairn service with real sandboxes: Vite
// bundles a page that imports it, the bundle must not import any Node module, and Debian's
// chromium (driven by playwright-core, never a downloaded browser) runs the page from another
// origin than the service's. The page creates a sandbox, runs a command, writes and reads a
// file, streams output over the exec WebSocket (which can only carry the `?token=` the service
// returned, as a browser cannot send headers with a WebSocket) and kills the sandbox.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { builtinModules } from "node:module";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { SandboxRecord } from "cairn/sandbox";
import { type Browser, chromium } from "playwright-core";
import { build, createLogger, type Rolldown } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxServer } from "./sandbox/helpers.js";
import type { TestServer } from "./server/helpers.js";

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
const entry = fileURLToPath(new URL("../src/sandbox/index.ts", import.meta.url));
const bundledSources = [
  "sandbox/client/sandbox.ts",
  "sandbox/client/files.ts",
  "sandbox/client/exec-handle.ts",
  "sandbox/client/http.ts",
].map((path) => fileURLToPath(new URL(`../src/${path}`, import.meta.url)));
const tmpRoot = fileURLToPath(new URL("./.tmp/", import.meta.url));

// The page: reads the service's endpoint and API key from its own URL, drives one sandbox
// through the client, and leaves a JSON summary (or the error) in #result. The sandbox id goes
// to data-sandbox-id, for the test to look the sandbox up on the service.
const mainTs = `import { Sandbox } from "cairn/sandbox";

const query = new URLSearchParams(location.search);
const output = document.getElementById("result") as HTMLElement;

async function main(): Promise<unknown> {
  const endpoint = query.get("endpoint");
  const apiKey = query.get("key");
  if (endpoint === null || apiKey === null) throw new Error("give ?endpoint= and ?key=");
  const sandbox = await Sandbox.create({ endpoint, apiKey, timeout: 120 });
  output.dataset.sandboxId = sandbox.id;
  try {
    const ran = await sandbox.run("sh", {
      args: ["-c", "echo hello from $(id -un); echo oops >&2; exit 3"],
    });
    await sandbox.files.write("note.txt", "from the browser");
    const note = await sandbox.files.readText("note.txt");

    // Every stdout byte through onStdout, decoded across chunk boundaries.
    const decoder = new TextDecoder();
    let streamed = "";
    const counting = await sandbox.exec("sh", {
      args: ["-c", "for i in $(seq 1 200); do echo line $i; done"],
      onStdout: (bytes) => {
        streamed += decoder.decode(bytes, { stream: true });
      },
    });
    const counted = await counting.wait();
    streamed += decoder.decode();
    if (counted.exitCode !== 0) throw new Error(\`the loop exited with \${counted.exitCode}\`);
    const lines = streamed.split("\\n");
    if (lines.pop() !== "") throw new Error("the streamed output does not end with a newline");
    lines.forEach((line, index) => {
      if (line !== \`line \${index + 1}\`) {
        throw new Error(\`streamed line \${index + 1} is \${JSON.stringify(line)}\`);
      }
    });
    if (counted.stdout !== streamed) throw new Error("wait() and onStdout saw different output");

    const stopped = await sandbox.kill();
    return {
      stdout: ran.stdout,
      stderr: ran.stderr,
      exitCode: ran.exitCode,
      note,
      lines: lines.length,
      finalStatus: stopped.status,
    };
  } catch (error) {
    await sandbox.kill().catch(() => undefined);
    throw error;
  }
}

main().then(
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

const indexHtml = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <title>cairn/sandbox in a browser</title>
  </head>
  <body>
    <output id="result"></output>
    <script type="module" src="./main.ts"></script>
  </body>
</html>
`;

let workDir: string;
let distDir: string;
let service: TestServer | undefined;
let site: Server;
let siteUrl: string;
let chunks: Rolldown.OutputChunk[];
const buildWarnings: string[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  await mkdir(tmpRoot, { recursive: true });
  workDir = await mkdtemp(join(tmpRoot, "sandbox-browser-"));
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
    resolve: { alias: [{ find: /^cairn\/sandbox$/, replacement: entry }] },
    build: { outDir: distDir, emptyOutDir: true, minify: false, write: true },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  chunks = outputs.flatMap((output) =>
    output.output.filter((item): item is Rolldown.OutputChunk => item.type === "chunk"),
  );

  site = await serveStatic(distDir);
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  // Throws in CI when sandboxes cannot run here; elsewhere undefined, with the reason printed.
  service = await startSandboxServer();
  if (service !== undefined && existsSync(chromiumPath)) {
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
  await service?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe("cairn/sandbox bundled for a browser", () => {
  it("imports no Node module: no node: specifier, no builtin", () => {
    expect(chunks.length).toBeGreaterThan(0);
    const entryChunk = chunks.find((chunk) => chunk.isEntry);
    // The sources of the client, not a prebuilt dist, are in the bundle.
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
          (id) => id.includes("__vite-browser-external") || id.startsWith("node:"),
        ),
        `${chunk.fileName} modules`,
      ).toEqual([]);
      // Neither the runner nor the server is pulled in through a shared module.
      expect(
        chunk.moduleIds.filter((id) => /[/\\]src[/\\](server|sandbox[/\\]runner)[/\\]/.test(id)),
        `${chunk.fileName} modules`,
      ).toEqual([]);
      expect(code).not.toMatch(/\brequire\s*\(/);
    }
    expect(buildWarnings.filter((message) => /externalized|browser compat/i.test(message))).toEqual(
      [],
    );
  });

  it("creates, runs, writes, reads, streams and kills a real sandbox from another origin", {
    timeout: 120_000,
  }, async () => {
    if (service === undefined) return; // startSandboxServer printed why.
    if (browser === undefined) {
      const reason = `chromium is not installed at ${chromiumPath}`;
      if (process.env.CI === "true") throw new Error(`${reason}; CI must run the browser tests`);
      console.warn(`sandbox-browser.test.ts: skipped: ${reason}`);
      return;
    }
    const endpoint = service.server.url;
    // The page and the service are different origins: every call is a CORS request.
    expect(new URL(endpoint).origin).not.toBe(siteUrl);

    const browserContext = await browser.newContext();
    try {
      const page = await browserContext.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`console: ${message.text()}`);
      });
      const sockets: string[] = [];
      page.on("websocket", (socket) => sockets.push(socket.url()));
      const origins: Array<Promise<string | null>> = [];
      page.on("request", (request) => {
        if (request.url().startsWith(`${endpoint}/`)) origins.push(request.headerValue("origin"));
      });

      const query = new URLSearchParams({ endpoint, key: service.apiKey });
      await page.goto(`${siteUrl}/index.html?${query}`);
      const result = page.locator("#result[data-done='true']");
      await result.waitFor({ timeout: 100_000 });
      expect(JSON.parse((await result.textContent()) ?? "null")).toEqual({
        stdout: "hello from sandbox\n",
        stderr: "oops\n",
        exitCode: 3,
        note: "from the browser",
        lines: 200,
        finalStatus: "stopped",
      });
      expect(errors).toEqual([]);

      // The page's calls came from its own origin, and the service allowed them.
      expect(origins.length).toBeGreaterThan(0);
      expect(new Set(await Promise.all(origins))).toEqual(new Set([siteUrl]));

      // One exec WebSocket per exec, each authorized by its ?token=, never by the API key.
      const sandboxId = await result.getAttribute("data-sandbox-id");
      expect(sandboxId).toMatch(/^sbx_[0-9a-f]{24}$/);
      expect(sockets).toHaveLength(2);
      for (const url of sockets) {
        const parsed = new URL(url);
        expect(parsed.protocol).toBe("ws:");
        expect(parsed.host).toBe(new URL(endpoint).host);
        expect(parsed.pathname).toMatch(
          new RegExp(`^/api/sandboxes/${sandboxId}/exec/ex_[0-9a-f]{24}$`),
        );
        expect(parsed.searchParams.get("token")).toMatch(/^[\w-]+\.[\w-]+$/);
        expect(url).toContain("token=");
        expect(url).not.toContain(service.apiKey);
      }

      // Two execs, so two distinct exec ids.
      expect(new Set(sockets.map((url) => new URL(url).pathname)).size).toBe(2);

      // The service saw the same: the sandbox is stopped, its end recorded.
      const record = (await (
        await service.call("GET", `/api/sandboxes/${sandboxId}`)
      ).json()) as SandboxRecord;
      expect(record).toMatchObject({ id: sandboxId, status: "stopped" });
      expect(record.endedAt).not.toBeNull();
    } finally {
      await browserContext.close();
    }
  });
});

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
