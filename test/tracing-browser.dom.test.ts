// Cairn's browser exit hooks under happy-dom: when the page is hidden (pagehide) or the tab
// turns hidden (visibilitychange), pending spans go to a real local collector through
// fetch(…, { keepalive: true }), so the request may outlive the page. The browser run in
// test/browser-bundle.test.ts proves the same in chromium; this one is the fast check.
import {
  configure,
  currentSpan,
  type ExportBatch,
  exportStats,
  flush,
  observe,
  shutdown,
} from "cairn-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Collector, startCollector } from "./helpers/collector.js";

interface FetchCall {
  url: string;
  method: string | undefined;
  keepalive: boolean | undefined;
}

let collector: Collector;
const realFetch = globalThis.fetch;
const fetchCalls: FetchCall[] = [];

beforeAll(async () => {
  collector = await startCollector();
  // A passthrough that notes how the exporter calls fetch.
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    fetchCalls.push({
      url: input instanceof Request ? input.url : String(input),
      method: init?.method,
      keepalive: init?.keepalive,
    });
    return realFetch(input, init);
  };
});

afterEach(async () => {
  await shutdown();
  fetchCalls.length = 0;
  collector.requests.length = 0;
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await collector.stop();
});

/** Tracing to the collector; the batch delay is an hour, so only a hook or flush() sends. */
function configureForPage(): void {
  configure({
    endpoint: collector.url,
    apiKey: "dom-key",
    serviceName: "dom-page",
    batch: { scheduledDelayMs: 3_600_000 },
  });
}

const searchDocs = observe(
  function searchDocs(query: string) {
    return { query, hits: 3, traceId: currentSpan().traceId };
  },
  { kind: "tool" },
);

function requestsOf(traceId: string): Collector["requests"] {
  return collector.requests.filter(
    (request) =>
      request.method === "POST" &&
      request.path === "/traces" &&
      (request.json() as ExportBatch).spans.some((span) => span.trace_id === traceId),
  );
}

describe("browser exit hooks (happy-dom)", () => {
  it("pagehide sends the pending spans with fetch keepalive", async () => {
    configureForPage();
    const { traceId } = searchDocs("keepalive");
    expect(traceId).toMatch(/^tr_[0-9a-f]{32}$/);
    expect(exportStats().queued).toBe(1);
    expect(fetchCalls).toEqual([]);

    window.dispatchEvent(new Event("pagehide"));
    await collector.waitFor(() => requestsOf(traceId).length > 0);

    expect(fetchCalls).toEqual([
      { url: `${collector.url}/traces`, method: "POST", keepalive: true },
    ]);
    const [request] = requestsOf(traceId);
    expect(request?.headers["x-api-key"]).toBe("dom-key");
    const batch = request?.json() as ExportBatch;
    expect(batch.resource.service_name).toBe("dom-page");
    expect(batch.spans).toHaveLength(1);
    expect(batch.spans[0]).toMatchObject({ trace_id: traceId, name: "searchDocs", kind: "tool" });
    expect(batch.spans[0]?.input).toContain("keepalive");

    // Keepalive is only for an unloading page: once it shows again (back-forward cache),
    // a flush() is an ordinary request.
    window.dispatchEvent(new Event("pageshow"));
    const later = searchDocs("later");
    await flush();
    expect(requestsOf(later.traceId)).toHaveLength(1);
    expect(fetchCalls).toEqual([
      { url: `${collector.url}/traces`, method: "POST", keepalive: true },
      { url: `${collector.url}/traces`, method: "POST", keepalive: false },
    ]);
  });

  it("a tab turning hidden sends the pending spans with fetch keepalive", async () => {
    configureForPage();
    const { traceId } = searchDocs("hidden tab");
    expect(exportStats().queued).toBe(1);

    Object.defineProperty(document, "visibilityState", { configurable: true, value: "hidden" });
    try {
      document.dispatchEvent(new Event("visibilitychange"));
      await collector.waitFor(() => requestsOf(traceId).length > 0);
    } finally {
      Reflect.deleteProperty(document, "visibilityState");
    }

    expect(document.visibilityState).toBe("visible");
    expect(fetchCalls).toEqual([
      { url: `${collector.url}/traces`, method: "POST", keepalive: true },
    ]);
    const batch = requestsOf(traceId)[0]?.json() as ExportBatch;
    expect(batch.spans.map((span) => span.name)).toEqual(["searchDocs"]);
    expect(exportStats().queued).toBe(0);
  });
});
