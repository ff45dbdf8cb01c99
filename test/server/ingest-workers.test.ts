import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "cairn-ai/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BatchIngester } from "../../src/server/ingest/batch-ingester.js";
import { WorkerIngester } from "../../src/server/ingest/worker-ingester.js";
import { WriteLock } from "../../src/server/store/write-lock.js";
import { captureLog } from "../helpers/log.js";
import { resource, span, startTestServer, type TestServer } from "./helpers.js";

const traces = 24;
const spansPerTrace = 12;
const senders = 6;

function traceId(index: number): string {
  return `tr_${(index + 1).toString(16).padStart(32, "0")}`;
}

/**
 * Every trace's spans, spread round-robin over `senders` batches, so that each trace is written
 * by every batch: the per-trace summaries are added to by several writers at once.
 */
function spreadBatches() {
  const batches = Array.from({ length: senders }, () => [] as Record<string, unknown>[]);
  let next = 0;
  for (let trace = 0; trace < traces; trace++) {
    for (let index = 0; index < spansPerTrace; index++) {
      const isRoot = index === 0;
      batches[next++ % senders]?.push(
        span({
          trace_id: traceId(trace),
          span_id: (trace * 1000 + index + 1).toString(16).padStart(16, "0"),
          parent_span_id: isRoot ? null : (trace * 1000 + 1).toString(16).padStart(16, "0"),
          name: isRoot ? `run-${trace}` : "call",
          kind: isRoot ? "agent" : "llm",
          model: isRoot ? null : `model-${index % 3}`,
          tags: [`t${index % 4}`],
          usage: isRoot ? null : { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          cost_usd: isRoot ? null : 0.001,
        }),
      );
    }
  }
  return batches.map((spans) => ({ resource, spans }));
}

// With ingest workers (the default on more than one core) or without, batches sent at the same
// time by several senders are all stored, and every trace's summary counts each span once.
describe.each([
  { workers: 0, label: "on the main thread" },
  { workers: 3, label: "on 3 ingest workers" },
])("concurrent POST /traces, $label", ({ workers }) => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.stop();
  });

  it("stores every span once and keeps each trace's totals exact", async () => {
    t = await startTestServer({ ingestWorkers: workers });
    const server = t;
    const batches = spreadBatches();
    // Each batch twice, all at once: the retries must count as duplicates, wherever they land.
    const answers = await Promise.all(
      [...batches, ...batches].map(async (batch) => {
        const response = await server.call("POST", "/traces", batch);
        expect(response.status).toBe(200);
        return (await response.json()) as { accepted: number; duplicates: number };
      }),
    );
    const accepted = answers.reduce((sum, answer) => sum + answer.accepted, 0);
    const duplicates = answers.reduce((sum, answer) => sum + answer.duplicates, 0);
    expect(accepted).toBe(traces * spansPerTrace);
    expect(duplicates).toBe(traces * spansPerTrace);

    for (const trace of [0, 7, traces - 1]) {
      const detail = await (await server.call("GET", `/traces/${traceId(trace)}`)).json();
      expect(detail).toMatchObject({
        name: `run-${trace}`,
        kind: "agent",
        span_count: spansPerTrace,
        usage: {
          prompt_tokens: 10 * (spansPerTrace - 1),
          completion_tokens: 5 * (spansPerTrace - 1),
          total_tokens: 15 * (spansPerTrace - 1),
        },
        tags: ["t0", "t1", "t2", "t3"],
      });
      expect(detail.cost_usd).toBeCloseTo(0.001 * (spansPerTrace - 1), 9);
    }
    const byModel = await (
      await server.call(
        "GET",
        "/analytics/traces?model=model-2&period_start=2026-11-20&period_end=2026-11-20&limit=100",
      )
    ).json();
    expect(byModel.traces).toHaveLength(traces);
  });

  it("answers a bad body with the same 400, storing nothing", async () => {
    t = await startTestServer({ ingestWorkers: workers });
    const bad = { resource, spans: [span(), span({ kind: "robot" })] };
    const response = await t.call("POST", "/traces", bad);
    expect(response.status).toBe(400);
    const error = await response.json();
    expect(error).toEqual({ error: "invalid_request", message: expect.stringMatching(/^span 1 /) });
    const list = await (
      await t.call("GET", "/analytics/traces?period_start=2026-11-20&period_end=2026-11-20")
    ).json();
    expect(list.traces).toEqual([]);
  });
});

describe("ingest workers that cannot start", () => {
  it("store on the main thread instead, and say why once", async () => {
    const log = captureLog();
    const stored: number[] = [];
    const fallback: BatchIngester = {
      ingest: async (_projectId, body) => {
        stored.push(body.byteLength);
        return { accepted: 1, duplicates: 0 };
      },
      close: async () => {},
    };
    // A worker cannot open a store in a folder that does not exist.
    const missing = join(tmpdir(), "cairn-no-such-folder", "nested", "cairn.db");
    const ingester = new WorkerIngester(missing, new WriteLock(), 2, fallback);
    try {
      const body = new TextEncoder().encode("{}");
      // Sent before the workers fail: handed over to the main thread, not lost.
      const early = await ingester.ingest("prj_x", body);
      const late = await ingester.ingest("prj_x", body);
      expect([early, late]).toEqual([
        { accepted: 1, duplicates: 0 },
        { accepted: 1, duplicates: 0 },
      ]);
      expect(stored).toEqual([2, 2]);
      const warnings = log.messages.filter(({ message }) =>
        message.includes("ingest workers could not start"),
      );
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe("error");
    } finally {
      await ingester.close();
      log.restore();
    }
  });
});

describe("the number of ingest workers", () => {
  it("is refused with a clear error when CAIRN_INGEST_WORKERS is not a count", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-workers-"));
    vi.stubEnv("CAIRN_INGEST_WORKERS", "lots");
    try {
      await expect(createServer({ port: 0, dataDir })).rejects.toThrow(
        'CAIRN_INGEST_WORKERS must be a whole number from 0 to 64 (got "lots")',
      );
      await expect(createServer({ port: 0, dataDir, ingestWorkers: -1 })).rejects.toThrow(
        "ingestWorkers must be a whole number from 0 to 64 (got -1)",
      );
    } finally {
      vi.unstubAllEnvs();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
