// The dashboard's budgets (issue 14), in one run, each figure next to a reference measured in the
// same run:
//   1. Initial JavaScript, min+gzip: what /ui/ loads before any lazy page (the entry chunk and its
//      static imports, from Vite's manifest of a build made for this run), and the traces and
//      trace pages' chunks (with what they import that the entry does not). Budget 200 kB;
//      reference: React and ReactDOM alone, built the same way.
//   2. The traces page on a store of 1,000,000 spans, signed in by a one-time link: its largest
//      contentful paint (goal <= 1 s) and when the first trace row is in the DOM; reference: the
//      same page on an empty store.
//   3. The trace page of a 10,000-span trace: until its tree is interactive (rows in the DOM, then
//      ArrowDown, pressed by the driver as soon as they are, has moved the selection; goal <= 1 s),
//      and a 25,000-span trace's rows and JS heap (CDP's JSHeapUsedSize after a GC); reference: a
//      100-span trace. The driver's round trips between the rows and the key are printed apart.
//   4. The API behind them: GET /analytics/traces as the traces page asks for it, and
//      GET /traces/{id}?payloads=false of each trace; reference: GET /health.
//
// Each page load is a full navigation in a new tab of a signed-in context (the assets in the
// browser's cache, as for a returning reader); the first load of each case warms the service
// and is reported apart, the rest give the median. Debian's chromium via playwright-core. The
// service runs in a child process (bench/support/serve.ts) on the cached store of
// bench/support/dashboard-store.ts. A page that is not built yet is reported as such.

import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { kB } from "../scripts/kit-bundle.js";
import { launchChromium } from "../test/helpers/browser.js";
import {
  buildDashboardBundle,
  type ChunkSize,
  type DashboardBundle,
  measureReactReference,
} from "./support/dashboard-bundle.js";
import {
  type ListLoad,
  loadTracePage,
  loadTracesPage,
  signIn,
  type TraceLoad,
} from "./support/dashboard-site.js";
import { dashboardApiKey, dashboardStore, largeTraceSizes } from "./support/dashboard-store.js";
import { median, ms, percentile, ratio, seconds, table, thousands } from "./support/report.js";
import { type ServerProcess, startServerProcess } from "./support/server-process.js";

const budgetBytes = 200_000;
const goalMs = 1_000;
/** Timed page loads per case, after one that warms the service (the 25,000-span trace: 3). */
const loads = 5;
const apiWarmup = 3;
const apiRounds = 20;
const notBuilt = "page not built yet (no rows within 15 s)";

type Row = string[];

// ---------------------------------------------------------------------------------------------
// Figures over loads: the first (the service warming up) apart, the median of the rest.

interface Loads<T> {
  readonly first: T;
  readonly timed: readonly T[];
}

interface Series {
  readonly first: number;
  readonly median: number;
  readonly max: number;
}

/** Runs `count` loads after a first; none when the first found nothing to time. */
async function repeat<T>(
  count: number,
  run: () => Promise<T>,
  measured: (load: T) => boolean,
): Promise<Loads<T>> {
  const first = await run();
  const timed: T[] = [];
  for (let index = 0; index < count && measured(first); index++) timed.push(await run());
  return { first, timed };
}

/** The figure `pick` gives of every load, or undefined when a load had none. */
function series<T>(of: Loads<T>, pick: (load: T) => number | undefined): Series | undefined {
  const first = pick(of.first);
  const timed = of.timed.map(pick);
  if (first === undefined || timed.length === 0) return undefined;
  if (timed.some((value) => value === undefined)) return undefined;
  const values = timed as number[];
  return { first, median: median(values), max: Math.max(...values) };
}

function timing(figure: Series | undefined, missing: string): string {
  return figure === undefined
    ? missing
    : `${ms(figure.median)} ms (first ${ms(figure.first)}, max ${ms(figure.max)})`;
}

function vs(value: number | undefined, reference: number | undefined): string {
  return value !== undefined && reference !== undefined && reference > 0
    ? ratio(value / reference)
    : "-";
}

function goal(value: number | undefined): string[] {
  return [`<= ${goalMs} ms`, vs(value, goalMs)];
}

// ---------------------------------------------------------------------------------------------
// 1. Bundle

function total(chunks: readonly ChunkSize[]): number {
  return chunks.reduce((sum, chunk) => sum + chunk.bytes, 0);
}

function bundleRows(bundle: DashboardBundle, reactBytes: number): Row[] {
  const initial = total(bundle.initial);
  const files = bundle.initial.map((chunk) => chunk.file.replace(/^assets\//, "")).join(", ");
  const budget = (bytes: number) => [`<= ${kB(budgetBytes)}`, ratio(bytes / budgetBytes)];
  const rows: Row[] = [
    [
      `initial JS (${files})`,
      kB(initial),
      "React+ReactDOM alone",
      kB(reactBytes),
      ratio(initial / reactBytes),
      ...budget(initial),
    ],
  ];
  for (const name of ["traces", "trace"]) {
    const chunks = bundle.pages.get(name) ?? [];
    const added = total(chunks);
    rows.push([
      `${name} page chunk, and all it adds to the initial JS`,
      `${kB(chunks[0]?.bytes ?? 0)}, ${kB(added)}`,
      "initial JS",
      kB(initial),
      ratio(added / initial),
      "(lazy)",
      "",
    ]);
    if (name === "traces") {
      rows.push([
        "initial JS + the traces page",
        kB(initial + added),
        "React+ReactDOM alone",
        kB(reactBytes),
        ratio((initial + added) / reactBytes),
        ...budget(initial + added),
      ]);
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 2, 3. Pages

function listRows(spans: number, big: Loads<ListLoad>, empty: Loads<ListLoad>): Row[] {
  const lcp = series(big, (load) => load.lcp);
  const reference = series(empty, (load) => load.lcp);
  const firstRow = series(big, (load) => load.firstRow);
  const answered = series(big, (load) => load.listAnswered);
  const emptyAnswered = series(empty, (load) => load.listAnswered);
  return [
    [
      "traces page: GET /analytics/traces answered, in the page",
      timing(answered, "-"),
      "same, empty store",
      timing(emptyAnswered, "-"),
      vs(answered?.median, emptyAnswered?.median),
      "",
      "",
    ],
    [
      `traces page: largest contentful paint, ${thousands(spans)} spans`,
      timing(lcp, "-"),
      "same page, empty store",
      timing(reference, "-"),
      vs(lcp?.median, reference?.median),
      ...goal(lcp?.median),
    ],
    [
      "traces page: first trace row in the DOM",
      timing(firstRow, notBuilt),
      "LCP, empty store",
      reference === undefined ? "-" : `${ms(reference.median)} ms`,
      vs(firstRow?.median, reference?.median),
      ...goal(firstRow?.median),
    ],
  ];
}

function difference(later: number | undefined, earlier: number | undefined): number | undefined {
  return later === undefined || earlier === undefined ? undefined : later - earlier;
}

/** From the keydown (the browser took the input) to the selection moved on the page. */
function keyToMove(load: TraceLoad): number | undefined {
  return difference(load.interactiveAt, load.pressedAt);
}

function traceRows(traces: ReadonlyMap<number, Loads<TraceLoad>>): Row[] {
  const small = traces.get(100) as Loads<TraceLoad>;
  const smallRows = series(small, (load) => load.rowsAt);
  const smallInteractive = series(small, (load) => load.interactiveAt);
  const smallHeap = series(small, (load) => load.heapBytes);
  const smallKey = series(small, keyToMove);
  const smallAnswered = series(small, (load) => load.treeAnswered);
  const reference = (figure: Series | undefined) =>
    figure === undefined ? "-" : `${ms(figure.median)} ms`;
  const rows: Row[] = [];
  for (const size of [10_000, 25_000]) {
    const large = traces.get(size) as Loads<TraceLoad>;
    const name = `trace page, ${thousands(size)} spans`;
    const judged = size === 10_000;
    const rowsAt = series(large, (load) => load.rowsAt);
    const interactive = series(large, (load) => load.interactiveAt);
    const heap = series(large, (load) => load.heapBytes);
    const key = series(large, keyToMove);
    const driver = series(large, (load) => difference(load.pressedAt, load.rowsAt));
    const answered = series(large, (load) => load.treeAnswered);
    rows.push(
      [
        `${name}: GET /traces/{id}?payloads=false answered, in the page`,
        rowsAt === undefined ? notBuilt : timing(answered, "-"),
        "100-span trace",
        reference(smallAnswered),
        vs(answered?.median, smallAnswered?.median),
        "",
        "",
      ],
      [
        `${name}: tree rows in the DOM (rows rendered)`,
        rowsAt === undefined ? notBuilt : `${timing(rowsAt, "")} (${large.first.rows})`,
        "100-span trace",
        `${reference(smallRows)} (${small.first.rows})`,
        vs(rowsAt?.median, smallRows?.median),
        ...(judged ? goal(rowsAt?.median) : ["", ""]),
      ],
      [
        `${name}: interactive (ArrowDown moved the selection)`,
        rowsAt === undefined
          ? notBuilt
          : timing(interactive, "rows, but ArrowDown moved no selection within 5 s"),
        "100-span trace",
        reference(smallInteractive),
        vs(interactive?.median, smallInteractive?.median),
        ...(judged ? goal(interactive?.median) : ["", ""]),
      ],
      [
        `${name}: ArrowDown pressed to the selection moved`,
        key === undefined || driver === undefined
          ? "-"
          : `${ms(key.median)} ms (pressed ${ms(driver.median)} ms after the rows came)`,
        "100-span trace",
        reference(smallKey),
        vs(key?.median, smallKey?.median),
        "",
        "",
      ],
      [
        `${name}: JS heap used after a GC`,
        rowsAt === undefined || heap === undefined
          ? notBuilt
          : `${(heap.median / 1e6).toFixed(1)} MB`,
        "100-span trace",
        smallHeap === undefined ? "-" : `${(smallHeap.median / 1e6).toFixed(1)} MB`,
        vs(heap?.median, smallHeap?.median),
        judged ? "" : "renders",
        "",
      ],
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 4. API

interface ApiFigure {
  readonly p50: number;
  readonly p95: number;
  readonly bytes: number;
}

async function timeApi(server: ServerProcess, path: string): Promise<ApiFigure> {
  const once = async () => {
    const started = performance.now();
    const response = await fetch(`${server.url}${path}`, {
      headers: { "x-api-key": dashboardApiKey },
    });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`bench: GET ${path} answered ${response.status}`);
    return { ms: performance.now() - started, bytes: body.byteLength };
  };
  for (let index = 0; index < apiWarmup; index++) await once();
  const times: number[] = [];
  let bytes = 0;
  for (let index = 0; index < apiRounds; index++) {
    const result = await once();
    times.push(result.ms);
    bytes = result.bytes;
  }
  return { p50: median(times), p95: percentile(times, 95), bytes };
}

function apiRow(label: string, figure: ApiFigure, health: ApiFigure): Row {
  return [
    `API ${label}: p50 (p95), JSON`,
    `${ms(figure.p50)} ms (${ms(figure.p95)}), ${kB(figure.bytes)}`,
    "GET /health",
    `${ms(health.p50)} ms`,
    ratio(figure.p50 / health.p50),
    "",
    "",
  ];
}

// ---------------------------------------------------------------------------------------------

export async function runDashboardBench(): Promise<void> {
  const started = process.hrtime.bigint();
  const loadStart = loadavg()[0] ?? Number.NaN;
  const workDir = await mkdtemp(join(tmpdir(), "cairn-bench-dashboard-"));
  const servers: ServerProcess[] = [];
  let browser: Browser | undefined;
  try {
    const buildStarted = process.hrtime.bigint();
    const bundle = await buildDashboardBundle(join(workDir, "site"));
    const reactBytes = await measureReactReference(join(workDir, "react"));
    const buildSeconds = seconds(buildStarted);
    const store = dashboardStore();
    const { meta } = store;
    const launched = await launchChromium();
    if (launched.browser === undefined) throw new Error(`bench dashboard: ${launched.reason}`);
    browser = launched.browser;

    const dashboard = { directory: bundle.directory };
    const big = await startServerProcess({ dataDir: store.dir, apiKey: meta.apiKey, dashboard });
    servers.push(big);
    const empty = await startServerProcess({
      dataDir: join(workDir, "empty-store"),
      apiKey: dashboardApiKey,
      dashboard,
    });
    servers.push(empty);
    const bigSite = await signIn(browser, big, dashboardApiKey);
    const emptySite = await signIn(browser, empty, dashboardApiKey);

    const measureStarted = process.hrtime.bigint();
    // The store's page and the empty store's by turns, so that both share the machine's state.
    const bigLoads: ListLoad[] = [];
    const emptyLoads: ListLoad[] = [];
    for (let index = 0; index <= loads; index++) {
      // Without rows in the first load (the page is not built yet), the rest wait for none.
      const rows = index === 0 || bigLoads[0]?.firstRow !== undefined;
      bigLoads.push(await loadTracesPage(bigSite, rows));
      emptyLoads.push(await loadTracesPage(emptySite, false));
    }
    const [bigFirst, ...bigTimed] = bigLoads as [ListLoad, ...ListLoad[]];
    const [emptyFirst, ...emptyTimed] = emptyLoads as [ListLoad, ...ListLoad[]];
    const traces = new Map<number, Loads<TraceLoad>>();
    for (const size of largeTraceSizes) {
      traces.set(
        size,
        await repeat(
          size === 25_000 ? 3 : loads,
          () => loadTracePage(bigSite, meta.largeTraces[size]),
          (first) => first.rowsAt !== undefined,
        ),
      );
    }
    const listPath = bigSite.requests.get("/analytics/traces") ?? "/analytics/traces";
    const health = await timeApi(big, "/health");
    const api: Row[] = [
      apiRow("GET /analytics/traces (the page's query)", await timeApi(big, listPath), health),
    ];
    for (const size of largeTraceSizes) {
      const path = `/traces/${meta.largeTraces[size]}?payloads=false`;
      api.push(
        apiRow(
          `GET /traces/{${thousands(size)} spans}?payloads=false`,
          await timeApi(big, path),
          health,
        ),
      );
    }
    const measureSeconds = seconds(measureStarted);

    const errors = [...new Set([...bigSite.errors, ...emptySite.errors])];
    console.log(
      [
        `dashboard: chromium ${browser.version()}, the service on a store of ${thousands(meta.spans)} spans (${thousands(meta.traces)} traces) and on an empty one, Node ${process.version}`,
        `  store: ${store.dir}; ${store.builtNow ? "built now" : `cached, built ${meta.builtAt}`}; building it takes ${meta.buildSeconds.toFixed(0)} s (SpanStore.ingest, 10,000 spans per transaction)`,
        `  pages: full loads in a new tab of a context signed in by a one-time link (assets cached), ms from the navigation's start;`,
        `    median of ${loads} loads after a first one (25,000 spans: 3); API: ${apiRounds} requests after ${apiWarmup}, one at a time, with the key;`,
        `    the page's query: ${listPath}`,
        "",
        table([
          ["figure", "measured", "reference (same run)", "reference", "vs ref", "goal", "vs goal"],
          ...bundleRows(bundle, reactBytes),
          ...listRows(
            meta.spans,
            { first: bigFirst, timed: bigTimed },
            { first: emptyFirst, timed: emptyTimed },
          ),
          ...traceRows(traces),
          ...api,
        ]),
        "",
        `largest contentful paint on the store: ${bigTimed.at(-1)?.lcpElement ?? "?"}; on the empty store: ${emptyTimed.at(-1)?.lcpElement ?? "?"}`,
        ...(errors.length === 0 ? [] : [`page errors: ${errors.join("; ")}`]),
        `load average (1 min) ${loadStart.toFixed(1)} at the start, ${loadavg()[0]?.toFixed(1)} at the end, on ${availableParallelism()} cores`,
        `took ${seconds(started).toFixed(1)} s (building the dashboard ${buildSeconds.toFixed(1)} s, measuring ${measureSeconds.toFixed(1)} s${store.builtNow ? `, building the store ${meta.buildSeconds.toFixed(1)} s` : ""})`,
      ].join("\n"),
    );
  } finally {
    await browser?.close();
    for (const server of servers) await server.close();
    await rm(workDir, { recursive: true, force: true });
  }
}
