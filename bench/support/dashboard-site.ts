// The dashboard bench's pages in chromium: a browser context signed in to a service by a
// one-time link (POST /auth/login-codes, then GET /login?code=), and full loads of the traces
// and trace pages in new tabs of it, timed in the page's own clock (./page-timing.ts).

import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  answeredAt,
  countOf,
  instrument,
  keyMovesSelection,
  largestContentfulPaint,
  waitForFound,
  waitForQuiet,
} from "./page-timing.js";
import type { ServerProcess } from "./server-process.js";

/** What the bench looks for in the pages (the traces list links each row to its trace page). */
export const selectors = {
  traceRow: 'main a[href*="/traces/tr_"]',
  treeRow:
    "main [role=tree] [role=treeitem], main [role=treegrid] [role=row]:not(:has([role=columnheader]))",
} as const;

/** How long a page may take to show its first row before the bench calls it not built. */
const rowTimeoutMs = 15_000;

export interface Site {
  readonly server: ServerProcess;
  readonly context: BrowserContext;
  /** Errors thrown in any of its pages. */
  readonly errors: string[];
  /** The last URL requested of each API path (outside /ui), as the pages asked. */
  readonly requests: Map<string, string>;
}

/** A new browser context signed in to `server` by a one-time link, as `cairn open` prints. */
export async function signIn(
  browser: Browser,
  server: ServerProcess,
  apiKey: string,
): Promise<Site> {
  const response = await fetch(`${server.url}/auth/login-codes`, {
    method: "POST",
    headers: { "x-api-key": apiKey },
  });
  if (response.status !== 201) {
    throw new Error(
      `bench: POST /auth/login-codes answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
    );
  }
  const { url } = (await response.json()) as { url: string };
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  await instrument(context, selectors);
  const errors: string[] = [];
  const requests = new Map<string, string>();
  context.on("weberror", (error) => errors.push(error.error().message));
  context.on("request", (request) => {
    const address = new URL(request.url());
    if (!address.pathname.startsWith("/ui")) {
      requests.set(address.pathname, `${address.pathname}${address.search}`);
    }
  });
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForURL(/\/ui\//);
  await page.close();
  return { server, context, errors, requests };
}

async function load<T>(site: Site, path: string, measure: (page: Page) => Promise<T>): Promise<T> {
  const page = await site.context.newPage();
  try {
    await page.goto(`${site.server.url}/ui${path}`, { waitUntil: "commit" });
    return await measure(page);
  } finally {
    await page.close();
  }
}

export interface ListLoad {
  /** The largest contentful paint, ms since the navigation started. */
  readonly lcp: number;
  readonly lcpElement: string;
  /** When the first trace row was in the DOM; undefined: none came (or none was waited for). */
  readonly firstRow: number | undefined;
  /** When GET /analytics/traces had answered. */
  readonly listAnswered: number | undefined;
}

/** A full load of /ui/traces; `rows` false: the page shows none (an empty store). */
export function loadTracesPage(site: Site, rows: boolean): Promise<ListLoad> {
  return load(site, "/traces", async (page) => {
    const firstRow = rows ? await waitForFound(page, "traceRow", rowTimeoutMs) : undefined;
    // The LCP is final once the page stops changing (or at the reader's first input).
    await waitForQuiet(page, 500, rowTimeoutMs);
    const lcp = await largestContentfulPaint(page);
    if (lcp === undefined) throw new Error("bench: the traces page reported no contentful paint");
    const listAnswered = await answeredAt(page, "/analytics/traces");
    return { lcp: lcp.time, lcpElement: lcp.element, firstRow, listAnswered };
  });
}

export interface TraceLoad {
  /** When GET /traces/{id} had answered. */
  readonly treeAnswered: number | undefined;
  /** When the tree's first row was in the DOM; undefined: none within 15 s (not built yet). */
  readonly rowsAt: number | undefined;
  /** When ArrowDown, pressed as soon as there were rows, had moved the selection. */
  readonly interactiveAt: number | undefined;
  /** When that key was pressed (the driver's round trips after the rows came). */
  readonly pressedAt: number | undefined;
  /** Tree rows in the DOM (a virtualized tree renders what is shown). */
  readonly rows: number;
  /** CDP's JSHeapUsedSize after a garbage collection. */
  readonly heapBytes: number;
}

/** A full load of /ui/traces/`traceId`, until its tree answers a key. */
export function loadTracePage(site: Site, traceId: string): Promise<TraceLoad> {
  return load(site, `/traces/${traceId}`, async (page) => {
    const rowsAt = await waitForFound(page, "treeRow", rowTimeoutMs);
    const moved =
      rowsAt === undefined
        ? undefined
        : await keyMovesSelection(page, selectors.treeRow, "ArrowDown", 5_000);
    const rows = await countOf(page, selectors.treeRow);
    const treeAnswered = await answeredAt(page, `/traces/${traceId}`);
    const cdp = await site.context.newCDPSession(page);
    await cdp.send("Performance.enable");
    await cdp.send("HeapProfiler.collectGarbage");
    const { metrics } = await cdp.send("Performance.getMetrics");
    await cdp.detach();
    return {
      treeAnswered,
      rowsAt,
      interactiveAt: moved?.movedAt,
      pressedAt: moved?.pressedAt,
      rows,
      heapBytes: metrics.find((metric) => metric.name === "JSHeapUsedSize")?.value ?? Number.NaN,
    };
  });
}
