// `cairn-ai/sandbox` in a real browser, against a real Cairn service with real sandboxes: Vite
// bundles a page that imports it, the bundle must not import any Node module, and Debian's
// chromium (driven by playwright-core, never a downloaded browser) runs the page from another
// origin than the service's. The page creates a sandbox, runs a command, writes and reads a
// file, streams output over the exec WebSocket (which can only carry the `?token=` the service
// returned, as a browser cannot send headers with a WebSocket) and kills the sandbox.
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { SandboxRecord } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBrowserSafe,
  type BuiltPage,
  buildPage,
  type Chromium,
  createWorkDir,
  launchChromium,
  needChromium,
  reportMainResult,
  resultPage,
  type StaticSite,
  serveStatic,
} from "./helpers/browser.js";
import { needSandboxes, startSandboxServer } from "./sandbox/helpers.js";
import type { TestServer } from "./server/helpers.js";

const entry = fileURLToPath(new URL("../src/sandbox/index.ts", import.meta.url));
const bundledSources = [
  "sandbox/client/sandbox.ts",
  "sandbox/client/files.ts",
  "sandbox/client/exec-handle.ts",
  "sandbox/client/http.ts",
].map((path) => fileURLToPath(new URL(`../src/${path}`, import.meta.url)));

// The page: reads the service's endpoint and API key from its own URL, drives one sandbox
// through the client, and leaves a JSON summary (or the error) in #result. The sandbox id goes
// to data-sandbox-id, for the test to look the sandbox up on the service.
const mainTs = `import { Sandbox } from "cairn-ai/sandbox";

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

${reportMainResult}`;

const indexHtml = resultPage("cairn/sandbox in a browser");

let workDir: string;
let built: BuiltPage;
let service: TestServer | undefined;
let site: StaticSite;
let siteUrl: string;
// Launched only when there is a service for the page to talk to.
let chromium: Chromium = { reason: "chromium was not launched: there is no sandbox service" };

beforeAll(async () => {
  workDir = await createWorkDir("sandbox-browser-");
  built = await buildPage({
    workDir,
    files: { "index.html": indexHtml, "main.ts": mainTs },
    alias: { "cairn-ai/sandbox": entry },
  });

  site = await serveStatic(built.distDir);
  siteUrl = site.url;

  // Undefined where sandboxes cannot run here: the test then skips, with the reason.
  service = await startSandboxServer();
  if (service !== undefined) chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium.browser?.close();
  await site?.close();
  await service?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, 60_000);

describe("cairn/sandbox bundled for a browser", () => {
  it("imports no Node module: no node: specifier, no builtin", () => {
    const entryChunk = built.chunks.find((chunk) => chunk.isEntry);
    // The sources of the client, not a prebuilt dist, are in the bundle.
    expect(entryChunk?.moduleIds).toEqual(expect.arrayContaining(bundledSources));

    // Neither the runner nor the server is pulled in through a shared module.
    assertBrowserSafe(built, {
      forbidModule: (id) => /[/\\]src[/\\](server|sandbox[/\\]runner)[/\\]/.test(id),
    });
  });

  it("creates, runs, writes, reads, streams and kills a real sandbox from another origin", {
    timeout: 120_000,
  }, async (context) => {
    needSandboxes(context, service);
    needChromium(context, chromium);
    const endpoint = service.server.url;
    // The page and the service are different origins: every call is a CORS request.
    expect(new URL(endpoint).origin).not.toBe(siteUrl);

    const browserContext = await chromium.browser.newContext();
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
