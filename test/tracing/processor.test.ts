import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { configure, type ExportStats, exportStats, flush, observe, shutdown } from "cairn-ai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startCollector } from "../helpers/collector.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let before: ExportStats;
const added = () => {
  const now = exportStats();
  return { exported: now.exported - before.exported, dropped: now.dropped - before.dropped };
};

beforeEach(() => {
  before = exportStats();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await shutdown();
});

describe("the exporting processor", () => {
  it("never sends a batch twice because its exporter answered late", async () => {
    const received: string[] = [];
    const slowExporter: SpanExporter = {
      export(spans: ReadableSpan[], done) {
        received.push(...spans.map((span) => span.name));
        setTimeout(() => done({ code: ExportResultCode.SUCCESS }), 400);
      },
      async shutdown() {},
    };
    configure({ exporter: slowExporter, batch: { exportTimeoutMs: 100, scheduledDelayMs: 10 } });
    observe(() => 1, { spanName: "slow-export" })();
    await sleep(700);
    expect(received).toEqual(["slow-export"]);
    expect(added()).toEqual({ exported: 0, dropped: 1 });
    expect(exportStats().lastError).toContain("did not answer within 200 ms");
  });

  it("ends spans still open at shutdown, marked unfinished, and does not wait for them", async () => {
    const collector = await startCollector();
    try {
      configure({ endpoint: collector.url });
      const never = observe(async function waitsForever() {
        await new Promise(() => undefined);
      });
      void never();
      await shutdown();
      const [span] = collector.spans();
      expect(span).toMatchObject({ name: "waitsForever" });
      expect(span?.attributes).toMatchObject({ "cairn.unfinished": true });
    } finally {
      await collector.stop();
    }
  });

  it("keeps to Retry-After in immediate mode, until an explicit flush()", async () => {
    const collector = await startCollector();
    try {
      collector.answerNext({ status: 429, headers: { "retry-after": "30" } });
      configure({ endpoint: collector.url, exportMode: "immediate" });
      for (const name of ["first", "second", "third"]) {
        await observe(async () => name, { spanName: name })();
      }
      expect(collector.requests.map((request) => request.status)).toEqual([429]);
      await flush();
      expect(collector.spans().map((span) => span.name)).toEqual(["first", "second", "third"]);
    } finally {
      await collector.stop();
    }
  });

  it("prints concurrent traces whole with the console exporter", async () => {
    const printed: string[] = [];
    vi.spyOn(console, "log").mockImplementation((text: string) => {
      printed.push(text);
    });
    configure({ exporter: "console" });
    const step = observe(async (ms: number) => sleep(ms), { spanName: "step" });
    const fast = observe(async () => step(1), { spanName: "fast" });
    const slow = observe(async () => step(50), { spanName: "slow" });
    await Promise.all([fast(), slow()]);
    await flush();
    expect(printed).toHaveLength(2);
    for (const tree of printed) expect(tree.split("\n")).toHaveLength(3);
  });
});
