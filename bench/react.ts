// The React kit (issue 13), in one run:
//   1. Bundle sizes as an app's bundler ships them (esbuild, min+gzip, React external; lazy
//      chunks apart), each next to its budget and to the anchors' published figures.
//   2. In chromium (Debian's, driven by playwright-core), with in-memory backends:
//      - commits per animation frame while an answer streams 3,000 deltas (goal <= 1);
//      - appending a message to a 1,000-message thread: time to paint and the longest task
//        (goal <= 50 ms; assistant-ui measured ~80 ms at 200 messages);
//      - keystroke to paint in the composer at 1,000 messages (goal <= 50 ms);
//      - message nodes in the DOM at 5,000 messages (goal < 100);
//      - the file manager on 10,000 entries: listing answered to first paint (goal <= 100 ms)
//        and rows in the DOM (goal < 200).

import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { build } from "vite";
import {
  type KitEntry,
  kB,
  kitBudgets,
  kitEntries,
  measureEntry,
  measureStyles,
} from "../scripts/kit-bundle.js";
import { serveStatic } from "../test/helpers/browser.js";
import { median, ms, percentile, ratio, table } from "./support/report.js";

/** The anchors' published figures (issue 13: esbuild, min+gzip, React external). */
const anchors: Readonly<Record<string, { name: string; bytes: number }>> = {
  kit: { name: "the anchors together (low end)", bytes: 230_000 },
  chat: { name: "AI SDK useChat + react-markdown", bytes: 105_000 },
  "file-manager": { name: "SVAR file manager", bytes: 50_000 },
  upload: { name: "FilePond", bytes: 42_000 },
  status: { name: "(no anchor)", bytes: Number.NaN },
  highlighter: { name: "(no anchor)", bytes: Number.NaN },
  css: { name: "chatscope CSS", bytes: 6_000 },
};

async function bundleFigures(): Promise<void> {
  const rows: string[][] = [["part", "min+gzip", "budget", "anchor", "anchor size", "ours/anchor"]];
  const row = (part: string, bytes: number) => {
    const anchor = anchors[part];
    rows.push([
      part,
      kB(bytes),
      kB(kitBudgets[part as keyof typeof kitBudgets]),
      anchor?.name ?? "",
      anchor === undefined || Number.isNaN(anchor.bytes) ? "-" : kB(anchor.bytes),
      anchor === undefined || Number.isNaN(anchor.bytes) ? "-" : ratio(bytes / anchor.bytes),
    ]);
  };
  let lazy: ReadonlyArray<{ name: string; bytes: number }> = [];
  for (const entry of Object.keys(kitEntries) as KitEntry[]) {
    const size = await measureEntry(entry);
    row(entry, size.initial);
    if (entry === "kit") lazy = size.lazy;
  }
  const sum = (name: string) =>
    lazy.filter((chunk) => chunk.name === name).reduce((total, chunk) => total + chunk.bytes, 0);
  row("highlighter", sum("highlight.js"));
  row("css", await measureStyles());
  console.log(table(rows));
  const others = lazy.filter((chunk) => chunk.name !== "highlight.js");
  if (others.length > 0) {
    console.log(
      `loaded only when used: ${others.map((chunk) => `${chunk.name} ${kB(chunk.bytes)}`).join(", ")}`,
    );
  }
}

interface StreamingFigures {
  commits: number;
  frames: number;
  mostInOneFrame: number;
  framesWithMore: number;
}

interface Scenarios {
  streaming(): Promise<StreamingFigures>;
  append(size: number): Promise<{ times: number[]; longest: number[] }>;
  domNodes(size: number): Promise<number>;
  mountThread(size: number): Promise<void>;
  files(count: number): Promise<{ firstPaint: number; rows: number }>;
}

async function browserFigures(): Promise<void> {
  try {
    accessSync("/usr/bin/chromium", constants.X_OK);
  } catch {
    throw new Error(
      "bench react: chromium is not installed at /usr/bin/chromium (Debian package chromium)",
    );
  }
  const workDir = await mkdtemp(join(tmpdir(), "cairn-bench-react-"));
  const pageRoot = fileURLToPath(new URL("./support/react-page/", import.meta.url));
  const source = (path: string) => fileURLToPath(new URL(`../src/${path}`, import.meta.url));
  await build({
    configFile: false,
    root: pageRoot,
    logLevel: "warn",
    resolve: {
      alias: [
        { find: /^cairn-ai\/react\/styles\.css$/, replacement: source("components/styles.css") },
        { find: /^cairn-ai\/react$/, replacement: source("react/index.ts") },
        // React's profiling build: production React whose <Profiler> still counts commits.
        { find: /^react-dom\/client$/, replacement: "react-dom/profiling" },
      ],
    },
    // React's production build, as an app ships it (with the profiling react-dom, see above).
    define: { "process.env.NODE_ENV": '"production"' },
    build: { outDir: join(workDir, "dist"), emptyOutDir: true },
  });
  const site = await serveStatic(join(workDir, "dist"));
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(site.url);
    await page.waitForSelector("body[data-ready=true]", { state: "attached" });
    const run = <R>(name: keyof Scenarios, ...args: unknown[]) =>
      page.evaluate(
        ([scenario, parameters]) =>
          // biome-ignore lint/suspicious/noExplicitAny: the page's own scenarios
          (window as any).scenarios[scenario as string](...(parameters as unknown[])),
        [name, args] as const,
      ) as Promise<R>;

    const streaming = await run<StreamingFigures>("streaming");
    const append = await run<{ times: number[]; longest: number[] }>("append", 1000);
    const nodes = await run<number>("domNodes", 5000);
    await run("mountThread", 1000);
    for (let index = 0; index < 40; index++) {
      await page.keyboard.press("a");
      await page.waitForTimeout(30);
    }
    const keyDelays = await page.evaluate(
      () => (window as unknown as { keyDelays: number[] }).keyDelays,
    );
    const files = await run<{ firstPaint: number; rows: number }>("files", 10_000);

    const perFrame = streaming.mostInOneFrame;
    console.log(
      table([
        ["figure", "measured", "goal", "measured/goal"],
        [
          "most commits in one frame while streaming 3,000 deltas",
          `${perFrame} (${streaming.commits} commits in ${streaming.frames} frames; ${streaming.framesWithMore} frames with more than one)`,
          "<= 1",
          ratio(perFrame / 1),
        ],
        [
          "append to 1,000 messages: time to paint, median (p95)",
          `${ms(median(append.times))} ms (${ms(percentile(append.times, 95))})`,
          "<= 50 ms (assistant-ui ~80 at 200)",
          ratio(median(append.times) / 50),
        ],
        [
          "append to 1,000 messages: longest task (0: none of 50 ms or more)",
          `${ms(Math.max(...append.longest))} ms`,
          "<= 50 ms",
          ratio(Math.max(...append.longest) / 50),
        ],
        [
          "keystroke to paint at 1,000 messages, median (p95)",
          `${ms(median(keyDelays))} ms (${ms(percentile(keyDelays, 95))})`,
          "<= 50 ms",
          ratio(median(keyDelays) / 50),
        ],
        ["message nodes in the DOM at 5,000 messages", String(nodes), "< 100", ratio(nodes / 100)],
        [
          "file manager, 10,000 entries: listing to first paint",
          `${ms(files.firstPaint)} ms`,
          "<= 100 ms",
          ratio(files.firstPaint / 100),
        ],
        [
          "file manager, 10,000 entries: rows in the DOM",
          String(files.rows),
          "< 200",
          ratio(files.rows / 200),
        ],
      ]),
    );
  } finally {
    await browser.close();
    await site.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

export async function runReactBench(): Promise<void> {
  console.log("React kit: bundle (esbuild, min+gzip, React external)");
  await bundleFigures();
  console.log("\nReact kit in chromium (production React, in-memory backends)");
  await browserFigures();
}
