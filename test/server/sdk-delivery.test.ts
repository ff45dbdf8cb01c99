import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, type ExportStats, exportStats, flush, observe, shutdown } from "cairn-ai";
import { createServer } from "cairn-ai/server";
import { afterEach, describe, expect, it } from "vitest";

const key = "delivery-key-1234567890";
const folders: string[] = [];

afterEach(async () => {
  await shutdown();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function dataDir(): string {
  const folder = mkdtempSync(join(tmpdir(), "cairn-delivery-"));
  folders.push(folder);
  return folder;
}

async function spanCount(url: string): Promise<number> {
  for (;;) {
    const response = await fetch(`${url}/analytics/traces?limit=200`, {
      headers: { "x-api-key": key },
    });
    if (response.status === 429) {
      // The test reads with the key the SDK writes with, so it waits its turn too.
      const seconds = Number(response.headers.get("retry-after"));
      await new Promise((resolve) => setTimeout(resolve, 1000 * seconds));
      continue;
    }
    const page = (await response.json()) as { traces: Array<{ span_count: number }> };
    return page.traces.reduce((sum, trace) => sum + trace.span_count, 0);
  }
}

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const work = observe(async (index: number) => index * 2, { spanName: "work" });
const job = observe(
  async (count: number) => {
    for (let index = 0; index < count; index++) await work(index);
  },
  { kind: "agent", spanName: "job" },
);

describe("the SDK exporter against a real Cairn service", () => {
  it("keeps spans while the service is down and delivers each once when it is back", async () => {
    const folder = dataDir();
    const first = await createServer({ port: 0, dataDir: folder, apiKey: key });
    const port = first.port;
    await first.close();
    const before: ExportStats = exportStats();
    configure({
      endpoint: first.url,
      apiKey: key,
      batch: { scheduledDelayMs: 20, maxRetryDelayMs: 200 },
    });
    await job(9);
    await until(() => exportStats().retries > before.retries);
    const second = await createServer({ port, dataDir: folder });
    try {
      await until(async () => (await spanCount(second.url)) >= 10);
      await flush();
      expect(await spanCount(second.url)).toBe(10);
      expect(exportStats().dropped - before.dropped).toBe(0);
    } finally {
      await second.close();
    }
  });

  it("backs off when rate-limited (429, Retry-After) and delivers everything once", async () => {
    const server = await createServer({
      port: 0,
      dataDir: dataDir(),
      apiKey: key,
      rateLimit: { requestsPerSecond: 2, burst: 2 },
    });
    try {
      const before = exportStats();
      configure({ endpoint: server.url, apiKey: key, exportMode: "immediate" });
      await job(5);
      await until(async () => exportStats().queued === 0 && (await spanCount(server.url)) >= 6);
      expect(exportStats().retries - before.retries).toBeGreaterThan(0);
      expect(exportStats().lastError).toContain("429");
      expect(await spanCount(server.url)).toBe(6);
    } finally {
      await server.close();
    }
  });
});
