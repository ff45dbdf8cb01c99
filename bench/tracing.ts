// Per-call cost of observe() against a bare call and against the raw OpenTelemetry SDK doing the
// same job (a span per call, propagated as the active context, ended and handed to the same
// processor class over a no-op exporter). One run measures every case, rounds interleaved, so
// each figure is compared with a reference measured under the same conditions.
//
// Benchmarks never gate CI: a missed goal is printed, not thrown. A broken measurement (spans
// dropped or missing, context not propagated) does throw, since its figures would mean nothing.

import { context, type Span, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { configure, currentSpan, exportStats, flush, observe, shutdown } from "cairn";
import {
  type BatchOptions,
  BatchProcessor,
  defaultBatchOptions,
} from "../src/tracing/export/batch-processor.js";

/** observe() may cost at most this many times the raw OpenTelemetry SDK. */
const goalRatio = 1.3;

const rounds = 7;
const warmupCalls = 20_000;
/** Calls per timed round, per case. */
const syncCalls = 100_000;
const asyncCalls = 20_000;
/** Calls between two flushes (done outside the timed section), so the queue never fills. */
const chunkCalls = 10_000;
/** Cairn is not configured: the cost is a few ns, so more calls are needed to see it. */
const offSyncCalls = 1_000_000;
const offAsyncCalls = 100_000;

/**
 * One processor configuration for both sides. The queue holds more than one chunk, so nothing is
 * dropped; both processors are flushed after every chunk, outside the timed section. Batch size
 * and delay stay at Cairn's defaults (timers cannot fire inside a synchronous loop or a chain of
 * microtasks anyway, so within a chunk both sides only queue).
 */
const batchOptions: BatchOptions = {
  ...defaultBatchOptions,
  maxQueueSize: 32_768,
};

const question = "What is the capital of France?";

function answer(input: string): string {
  return input.endsWith("?") ? "Paris is the capital of France." : "I do not know.";
}

async function answerAsync(input: string): Promise<string> {
  return answer(input);
}

/** Counts what it is given and acknowledges it at once. */
class NoopExporter implements SpanExporter {
  exported = 0;

  export(spans: ReadableSpan[], resultCallback: (result: { code: ExportResultCode }) => void) {
    this.exported += spans.length;
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

// ---------------------------------------------------------------------------------------------
// The global OpenTelemetry context manager. Raw OpenTelemetry needs one to propagate context;
// Cairn propagates its own scope through its own AsyncLocalStorage, but also calls
// `context.with()` on the global API, so it pays for a registered manager too. Each case sets
// the state it is measured in before every timed chunk.

type GlobalContext = "none" | "als";

const contextManager = new AsyncLocalStorageContextManager();
let registered = false;

function useGlobalContext(state: GlobalContext): void {
  if (state === "als" && !registered) {
    contextManager.enable();
    if (!context.setGlobalContextManager(contextManager)) {
      throw new Error("bench: could not register the global context manager");
    }
    registered = true;
  } else if (state === "none" && registered) {
    context.disable();
    registered = false;
  }
}

// ---------------------------------------------------------------------------------------------
// The raw OpenTelemetry side.

const rawExporter = new NoopExporter();
const rawProcessor = new BatchProcessor(rawExporter, batchOptions, "batch");
const rawProvider = new TracerProvider({ spanProcessors: [rawProcessor] });
const tracer = rawProvider.getTracer("bench");

function rawSync(input: string): string {
  return tracer.startActiveSpan("answer", (span) => {
    const result = answer(input);
    span.end();
    return result;
  });
}

function rawAsync(input: string): Promise<string> {
  return tracer.startActiveSpan("answer", async (span) => {
    const result = await answerAsync(input);
    span.end();
    return result;
  });
}

// Not a goal reference: raw OpenTelemetry also setting the seven attributes observe() sets on
// such a call (kind, OpenInference kind, root flag, input and output with their MIME types).
// The gap between it and `raw` is the price of recording input and output at all.

const fixedAttributes = {
  "cairn.span.kind": "chain",
  "openinference.span.kind": "CHAIN",
  "cairn.root": true,
};

function recordIo(span: Span, input: string, output: string): void {
  span.setAttribute("input.value", input);
  span.setAttribute("input.mime_type", "text/plain");
  span.setAttribute("output.value", output);
  span.setAttribute("output.mime_type", "text/plain");
}

function rawAttrsSync(input: string): string {
  return tracer.startActiveSpan("answer", { attributes: fixedAttributes }, (span) => {
    const result = answer(input);
    recordIo(span, input, result);
    span.end();
    return result;
  });
}

function rawAttrsAsync(input: string): Promise<string> {
  return tracer.startActiveSpan("answer", { attributes: fixedAttributes }, async (span) => {
    const result = await answerAsync(input);
    recordIo(span, input, result);
    span.end();
    return result;
  });
}

// ---------------------------------------------------------------------------------------------
// The Cairn side.

const cairnExporter = new NoopExporter();
const observedSync = observe(answer);
const observedAsync = observe(answerAsync);

async function flushAll(): Promise<void> {
  await rawProcessor.forceFlush();
  await flush();
}

// ---------------------------------------------------------------------------------------------
// Timing.

type Target = (input: string) => string | Promise<string>;

interface Case {
  readonly id: string;
  readonly mode: "sync" | "async";
  readonly globalContext: GlobalContext;
  readonly target: Target;
}

/** Keeps every result alive, so no call can be optimised away. */
let sink = 0;

function timeSync(target: Target, calls: number): number {
  const fn = target as (input: string) => string;
  let total = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) total += fn(question).length;
  const elapsed = process.hrtime.bigint() - start;
  sink += total;
  return Number(elapsed);
}

async function timeAsync(target: Target, calls: number): Promise<number> {
  const fn = target as (input: string) => Promise<string>;
  let total = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) total += (await fn(question)).length;
  const elapsed = process.hrtime.bigint() - start;
  sink += total;
  return Number(elapsed);
}

/** Runs `calls` calls in chunks, flushing between chunks; returns ns per call. */
async function measure(item: Case, calls: number, chunk: number): Promise<number> {
  let elapsed = 0;
  for (let done = 0; done < calls; done += chunk) {
    const size = Math.min(chunk, calls - done);
    useGlobalContext(item.globalContext);
    elapsed += item.mode === "sync" ? timeSync(item.target, size) : await timeAsync(item.target, size);
    await flushAll();
  }
  return elapsed / calls;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * Warms every case up, then times `rounds` rounds. Within a round every case runs once; the order
 * rotates from round to round so no case always follows the same neighbour (or its garbage).
 */
async function runRounds(
  cases: readonly Case[],
  callsFor: (item: Case) => number,
  chunk: number,
): Promise<Map<string, number>> {
  for (const item of cases) await measure(item, Math.min(warmupCalls, callsFor(item)), chunk);
  const samples = new Map<string, number[]>(cases.map((item) => [item.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const item = cases[(i + round) % cases.length] as Case;
      samples.get(item.id)?.push(await measure(item, callsFor(item), chunk));
    }
  }
  useGlobalContext("none");
  return new Map([...samples].map(([id, values]) => [id, median(values)]));
}

// ---------------------------------------------------------------------------------------------
// Checks that the cases do what they claim, before timing them.

async function checkPropagation(): Promise<void> {
  useGlobalContext("als");
  const rawSeen = await tracer.startActiveSpan("check", async (span) => {
    await Promise.resolve();
    const active = trace.getActiveSpan();
    span.end();
    return active === span;
  });
  const cairnSeen = await observe(async () => {
    await Promise.resolve();
    return currentSpan().isRecording && trace.getActiveSpan() !== undefined;
  })();
  useGlobalContext("none");
  const cairnAlone = await observe(async () => {
    await Promise.resolve();
    return currentSpan().isRecording;
  })();
  if (!rawSeen || !cairnSeen || !cairnAlone) {
    throw new Error(
      `bench: context is not propagated (raw ${rawSeen}, cairn with global manager ${cairnSeen}, cairn alone ${cairnAlone})`,
    );
  }
  await flushAll();
}

// ---------------------------------------------------------------------------------------------
// Output.

function ns(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function ratio(value: number): string {
  return `${value.toFixed(2)}x`;
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows
    .map((row) => row.map((cell, column) => cell.padEnd(widths?.[column] ?? 0)).join("  ").trimEnd())
    .join("\n");
}

function describeBatch(options: BatchOptions): string {
  return Object.entries(options)
    .map(([key, value]) => `${key} ${value}`)
    .join(", ");
}

// ---------------------------------------------------------------------------------------------

export async function runTracingBench(): Promise<void> {
  const started = process.hrtime.bigint();
  await shutdown();
  configure({ exporter: cairnExporter, batch: batchOptions });
  await checkPropagation();
  const checkSpans = { raw: rawExporter.exported, cairn: cairnExporter.exported };

  const cases: Case[] = [];
  for (const mode of ["sync", "async"] as const) {
    const isSync = mode === "sync";
    cases.push(
      { id: `${mode}/bare`, mode, globalContext: "none", target: isSync ? answer : answerAsync },
      { id: `${mode}/raw`, mode, globalContext: "als", target: isSync ? rawSync : rawAsync },
      {
        id: `${mode}/raw+attrs`,
        mode,
        globalContext: "als",
        target: isSync ? rawAttrsSync : rawAttrsAsync,
      },
      {
        id: `${mode}/observe`,
        mode,
        globalContext: "none",
        target: isSync ? observedSync : observedAsync,
      },
      {
        id: `${mode}/observe+als`,
        mode,
        globalContext: "als",
        target: isSync ? observedSync : observedAsync,
      },
    );
  }
  const callsFor = (item: Case) => (item.mode === "sync" ? syncCalls : asyncCalls);
  const on = await runRounds(cases, callsFor, chunkCalls);

  // Every traced call must have reached the exporter: nothing dropped, nothing skipped.
  const tracedCalls = (kinds: readonly string[]) =>
    cases
      .filter((item) => kinds.some((kind) => item.id.endsWith(`/${kind}`)))
      .reduce((sum, item) => sum + Math.min(warmupCalls, callsFor(item)) + rounds * callsFor(item), 0);
  const stats = exportStats();
  const rawStats = rawProcessor.snapshot();
  const expected = {
    raw: checkSpans.raw + tracedCalls(["raw", "raw+attrs"]),
    cairn: checkSpans.cairn + tracedCalls(["observe", "observe+als"]),
  };
  const spansLine = `spans: raw OTel exported ${rawExporter.exported}/${expected.raw}, dropped ${rawStats.dropped}; Cairn exported ${cairnExporter.exported}/${expected.cairn}, dropped ${stats.dropped}`;
  if (
    stats.dropped !== 0 ||
    rawStats.dropped !== 0 ||
    rawExporter.exported !== expected.raw ||
    cairnExporter.exported !== expected.cairn
  ) {
    throw new Error(`bench: spans were dropped or lost, the figures are meaningless. ${spansLine}`);
  }

  // Tracing off: observe() after shutdown(), against the bare call.
  await shutdown();
  const offCases: Case[] = [
    { id: "sync/bare", mode: "sync", globalContext: "none", target: answer },
    { id: "sync/off", mode: "sync", globalContext: "none", target: observedSync },
    { id: "async/bare", mode: "async", globalContext: "none", target: answerAsync },
    { id: "async/off", mode: "async", globalContext: "none", target: observedAsync },
  ];
  const off = await runRounds(
    offCases,
    (item) => (item.mode === "sync" ? offSyncCalls : offAsyncCalls),
    Number.POSITIVE_INFINITY,
  );
  await rawProvider.shutdown();

  const get = (results: Map<string, number>, id: string) => results.get(id) ?? Number.NaN;
  const rows: string[][] = [
    [
      "case",
      "global ctx mgr",
      "bare ns",
      "raw OTel ns",
      "observe ns",
      "observe-bare ns",
      "observe/raw",
      "goal",
      "met",
    ],
  ];
  const verdicts: string[] = [];
  for (const mode of ["sync", "async"] as const) {
    const bare = get(on, `${mode}/bare`);
    const raw = get(on, `${mode}/raw`);
    for (const [suffix, label] of [
      ["observe", "none for Cairn"],
      ["observe+als", "ALS, both"],
    ] as const) {
      const observed = get(on, `${mode}/${suffix}`);
      const met = observed / raw <= goalRatio;
      rows.push([
        mode,
        label,
        ns(bare),
        ns(raw),
        ns(observed),
        ns(observed - bare),
        ratio(observed / raw),
        `<= ${ratio(goalRatio)}`,
        met ? "yes" : "NO",
      ]);
      verdicts.push(`${mode}${suffix === "observe" ? "" : " +ALS"} ${met ? "met" : "MISSED"}`);
    }
  }
  const attrsRows: string[][] = [["case", "raw OTel ns", "raw+attrs ns", "observe ns", "observe/raw+attrs"]];
  for (const mode of ["sync", "async"] as const) {
    const attrs = get(on, `${mode}/raw+attrs`);
    const observed = get(on, `${mode}/observe`);
    attrsRows.push([mode, ns(get(on, `${mode}/raw`)), ns(attrs), ns(observed), ratio(observed / attrs)]);
  }
  const offRows: string[][] = [["case", "bare ns", "observe (off) ns", "overhead ns", "observe/bare"]];
  for (const mode of ["sync", "async"] as const) {
    const bare = get(off, `${mode}/bare`);
    const observed = get(off, `${mode}/off`);
    offRows.push([mode, ns(bare), ns(observed), ns(observed - bare), ratio(observed / bare)]);
  }
  const allMet = verdicts.every((verdict) => verdict.endsWith(" met"));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;

  console.log(
    [
      `tracing: per-call cost (median of ${rounds} rounds, Node ${process.version}, ${process.platform}/${process.arch})`,
      `  workload: answer(${JSON.stringify(question)}) -> ${JSON.stringify(answer(question))}; observe() records input and output`,
      `  calls per round: sync ${syncCalls}, async ${asyncCalls} (await in a loop); warm-up ${warmupCalls} per case`,
      `  processor (both sides): BatchProcessor, batch mode, { ${describeBatch(batchOptions)} }, no-op exporter; flushed every ${chunkCalls} calls, outside the timed section`,
      "  raw OTel: new TracerProvider({ spanProcessors: [processor] }), tracer.startActiveSpan(), global AsyncLocalStorageContextManager",
      "  observe:  configure({ exporter: no-op, batch: same options }); 'global ctx mgr' says whether a global OTel context manager was registered during observe()",
      "",
      table(rows),
      "",
      `goal observe <= ${ratio(goalRatio)} raw OTel: ${allMet ? "MET" : "NOT MET"} (${verdicts.join(", ")})`,
      "  headline rows are 'none for Cairn' (Cairn alone: its own AsyncLocalStorage propagates the call);",
      "  'ALS, both' is an app that also registered a global OTel context manager (observe() then runs both).",
      "",
      "raw OTel setting the same 7 attributes as observe() (information only, not the goal reference):",
      table(attrsRows),
      "",
      `observe() with Cairn not configured (after shutdown()), median of ${rounds} rounds of ${offSyncCalls} sync / ${offAsyncCalls} async calls:`,
      table(offRows),
      "",
      spansLine,
      `took ${seconds.toFixed(1)} s (sink ${sink % 10})`,
    ].join("\n"),
  );
}
