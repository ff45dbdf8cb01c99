// Per-call cost of observe() against a bare call and against the raw OpenTelemetry SDK doing the
// same job (a span per call, propagated as the active context, ended and handed to the same
// processor class over a no-op exporter). One run measures every case, rounds interleaved, so
// each figure is compared with a reference measured under the same conditions.
//
// Benchmarks never gate CI: a missed goal is printed, not thrown. A broken measurement (spans
// dropped or missing, context not propagated) does throw, since its figures would mean nothing.
// BENCH_VERBOSE=1 also prints the ns per call of every round of every case.

import { context, type Span, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { configure, currentSpan, exportStats, flush, observe, shutdown } from "cairn-ai";
import {
  type BatchOptions,
  BatchProcessor,
  defaultBatchOptions,
} from "../src/tracing/export/batch-processor.js";
import { median, ratio, table } from "./support/report.js";

/** observe() may cost at most this many times the raw OpenTelemetry SDK. */
const goalRatio = 1.3;

const rounds = 11;
/** Calls per case before timing starts. */
const warmupCalls = 20_000;
/** Calls per timed round, per case. */
const syncCalls = 100_000;
const asyncCalls = 40_000;
/** Tracing off, the cost is a few ns: more calls are needed to see it. */
const offSyncCalls = 1_000_000;
const offAsyncCalls = 200_000;

/**
 * One processor configuration for both sides: Cairn's defaults. Timers cannot fire inside a
 * synchronous loop or a chain of microtasks, so the processors are flushed after every
 * `maxBatchSize` calls, outside the timed section, as the processor itself would once a batch is
 * full. The queue never holds more than one batch, so nothing is dropped.
 */
const batchOptions: BatchOptions = { ...defaultBatchOptions };
const chunkCalls = batchOptions.maxBatchSize;

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

function setGlobalContext(state: GlobalContext): void {
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

// Not a goal reference: raw OpenTelemetry also setting the three attributes observe() sets on
// such a call (the OpenInference kind, and input and output as text, which needs no MIME type).
// The gap between it and `raw` is what these attributes cost in the SDK, which validates each
// one; the gap between it and observe() is the cost of Cairn's own machinery.

const fixedAttributes = { "openinference.span.kind": "CHAIN" };

function recordIo(span: Span, input: string, output: string): void {
  span.setAttribute("input.value", input);
  span.setAttribute("output.value", output);
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

interface Result {
  /** Median ns per call over the rounds. */
  readonly ns: number;
  /** ns per call of each round, in order. */
  readonly rounds: readonly number[];
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

/**
 * One round: every case makes `calls` calls, `chunk` at a time. Within each chunk the cases take
 * turns, in an order that rotates from chunk to chunk, so all cases are measured over the same
 * stretch of time (the machine may be shared) and none always follows the same neighbour or its
 * garbage. Between chunks, outside the timed section, the processors are flushed. Returns the ns
 * per call of each case.
 */
async function runRound(
  cases: readonly Case[],
  calls: number,
  chunk: number,
  rotation: number,
): Promise<number[]> {
  const elapsed = cases.map(() => 0);
  for (let done = 0, turn = rotation; done < calls; done += chunk, turn++) {
    const size = Math.min(chunk, calls - done);
    for (let i = 0; i < cases.length; i++) {
      const index = (i + turn) % cases.length;
      const item = cases[index] as Case;
      setGlobalContext(item.globalContext);
      const ns =
        item.mode === "sync" ? timeSync(item.target, size) : await timeAsync(item.target, size);
      elapsed[index] = (elapsed[index] ?? 0) + ns;
      await flushAll();
    }
  }
  return elapsed.map((ns) => ns / calls);
}

/** Warms the cases up, then times `rounds` rounds of `calls` calls per case. */
async function runRounds(
  cases: readonly Case[],
  calls: number,
  chunk: number,
): Promise<Map<string, Result>> {
  await runRound(cases, warmupCalls, chunk, 0);
  const samples = cases.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const perCall = await runRound(cases, calls, chunk, round);
    perCall.forEach((ns, index) => {
      samples[index]?.push(ns);
    });
  }
  setGlobalContext("none");
  return new Map(
    cases.map((item, index) => {
      const values = samples[index] ?? [];
      return [item.id, { ns: median(values), rounds: values }];
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Checks that the cases do what they claim, before timing them.

async function checkPropagation(): Promise<void> {
  setGlobalContext("als");
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
  setGlobalContext("none");
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

/** Per round, `a` against `b` measured in that same round (the pairs share the machine's state). */
function perRound(a: Result, b: Result, compare: (a: number, b: number) => number): number[] {
  return a.rounds.map((value, round) => compare(value, b.rounds[round] ?? Number.NaN));
}

/** The median of the per-round ratios a/b: robust to load that comes and goes between rounds. */
function pairedRatio(a: Result, b: Result): number {
  return median(perRound(a, b, (x, y) => x / y));
}

/** The median of the per-round differences a-b, in ns. */
function pairedDifference(a: Result, b: Result): number {
  return median(perRound(a, b, (x, y) => x - y));
}

/** The smallest and largest per-round ratio a/b. */
function ratioRange(a: Result, b: Result): string {
  const ratios = perRound(a, b, (x, y) => x / y);
  return `${Math.min(...ratios).toFixed(2)}-${ratio(Math.max(...ratios))}`;
}

function describeBatch(options: BatchOptions): string {
  return Object.entries(options)
    .map(([key, value]) => `${key} ${value}`)
    .join(", ");
}

// ---------------------------------------------------------------------------------------------

function casesFor(mode: "sync" | "async"): Case[] {
  const isSync = mode === "sync";
  const observed = isSync ? observedSync : observedAsync;
  return [
    { id: "bare", mode, globalContext: "none", target: isSync ? answer : answerAsync },
    { id: "raw", mode, globalContext: "als", target: isSync ? rawSync : rawAsync },
    { id: "raw+attrs", mode, globalContext: "als", target: isSync ? rawAttrsSync : rawAttrsAsync },
    { id: "observe", mode, globalContext: "none", target: observed },
    { id: "observe+als", mode, globalContext: "als", target: observed },
  ];
}

export async function runTracingBench(): Promise<void> {
  const started = process.hrtime.bigint();
  await shutdown();
  configure({ exporter: cairnExporter, batch: batchOptions });
  await checkPropagation();
  const spansBefore = { raw: rawExporter.exported, cairn: cairnExporter.exported };

  const on = {
    sync: await runRounds(casesFor("sync"), syncCalls, chunkCalls),
    async: await runRounds(casesFor("async"), asyncCalls, chunkCalls),
  };

  // Every traced call must have reached the exporter: nothing dropped, nothing skipped.
  const perCase = 2 * warmupCalls + rounds * (syncCalls + asyncCalls);
  const expected = { raw: spansBefore.raw + 2 * perCase, cairn: spansBefore.cairn + 2 * perCase };
  const dropped = { raw: rawProcessor.snapshot().dropped, cairn: exportStats().dropped };
  const spansLine = `spans: raw OTel exported ${rawExporter.exported}/${expected.raw}, dropped ${dropped.raw}; Cairn exported ${cairnExporter.exported}/${expected.cairn}, dropped ${dropped.cairn} (exportStats().dropped)`;
  if (
    dropped.raw !== 0 ||
    dropped.cairn !== 0 ||
    rawExporter.exported !== expected.raw ||
    cairnExporter.exported !== expected.cairn
  ) {
    throw new Error(`bench: spans were dropped or lost, the figures are meaningless. ${spansLine}`);
  }

  // Tracing off: observe() after shutdown(), against the bare call.
  await shutdown();
  const offCases = (mode: "sync" | "async"): Case[] => [
    { id: "bare", mode, globalContext: "none", target: mode === "sync" ? answer : answerAsync },
    {
      id: "off",
      mode,
      globalContext: "none",
      target: mode === "sync" ? observedSync : observedAsync,
    },
  ];
  const off = {
    sync: await runRounds(offCases("sync"), offSyncCalls, 10_000),
    async: await runRounds(offCases("async"), offAsyncCalls, 10_000),
  };
  await rawProvider.shutdown();

  const missing: Result = { ns: Number.NaN, rounds: [] };
  const rows: string[][] = [
    [
      "case",
      "global ctx mgr",
      "bare ns",
      "raw OTel ns",
      "observe ns",
      "observe-bare ns",
      "observe/raw",
      "per round",
      "goal",
      "met",
    ],
  ];
  const verdicts: string[] = [];
  const attrsRows: string[][] = [
    ["case", "raw OTel ns", "raw+attrs ns", "observe ns", "raw+attrs/raw", "observe/raw+attrs"],
  ];
  const offRows: string[][] = [
    ["case", "bare ns", "observe (off) ns", "overhead ns", "observe/bare"],
  ];
  for (const mode of ["sync", "async"] as const) {
    const get = (id: string) => on[mode].get(id) ?? missing;
    const bare = get("bare");
    const raw = get("raw");
    for (const [id, label] of [
      ["observe", "none for Cairn"],
      ["observe+als", "ALS, both"],
    ] as const) {
      const observed = get(id);
      const observedRatio = pairedRatio(observed, raw);
      const met = observedRatio <= goalRatio;
      rows.push([
        mode,
        label,
        ns(bare.ns),
        ns(raw.ns),
        ns(observed.ns),
        ns(pairedDifference(observed, bare)),
        ratio(observedRatio),
        ratioRange(observed, raw),
        `<= ${ratio(goalRatio)}`,
        met ? "yes" : "NO",
      ]);
      verdicts.push(`${mode}${id === "observe" ? "" : " +ALS"} ${met ? "met" : "MISSED"}`);
    }
    const attrs = get("raw+attrs");
    const observed = get("observe");
    attrsRows.push([
      mode,
      ns(raw.ns),
      ns(attrs.ns),
      ns(observed.ns),
      ratio(pairedRatio(attrs, raw)),
      ratio(pairedRatio(observed, attrs)),
    ]);
    const offBare = off[mode].get("bare") ?? missing;
    const offObserved = off[mode].get("off") ?? missing;
    offRows.push([
      mode,
      ns(offBare.ns),
      ns(offObserved.ns),
      ns(pairedDifference(offObserved, offBare)),
      ratio(pairedRatio(offObserved, offBare)),
    ]);
  }
  const headlineMet = verdicts.filter((verdict) => !verdict.includes("+ALS"));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;

  console.log(
    [
      `tracing: per-call cost (median of ${rounds} rounds, Node ${process.version}, ${process.platform}/${process.arch})`,
      `  workload: answer(${JSON.stringify(question)}) -> ${JSON.stringify(answer(question))}; observe() records input and output`,
      `  calls per round and case: sync ${syncCalls}, async ${asyncCalls} (await in a loop); warm-up ${warmupCalls}; cases interleaved every ${chunkCalls} calls`,
      `  processor (both sides): BatchProcessor, batch mode, { ${describeBatch(batchOptions)} }, no-op exporter; flushed every ${chunkCalls} calls (maxBatchSize), outside the timed section`,
      "  raw OTel: new TracerProvider({ spanProcessors: [processor] }), tracer.startActiveSpan(), global AsyncLocalStorageContextManager",
      "  observe:  configure({ exporter: no-op, batch: same options }); 'global ctx mgr': whether a global OTel context manager is registered during observe()",
      "",
      table(rows),
      "",
      `goal observe <= ${ratio(goalRatio)} raw OTel: ${headlineMet.every((verdict) => verdict.endsWith(" met")) ? "MET" : "NOT MET"} (${verdicts.join(", ")})`,
      "  the goal is judged on the 'none for Cairn' rows: Cairn alone, its own AsyncLocalStorage carries the call, as",
      "  the raw OTel case's global manager does. 'ALS, both': the app also registered a global OTel context manager,",
      "  which observe() then feeds too (context.with), so it pays for two AsyncLocalStorage runs per call.",
      "  ns columns: medians over the rounds. Ratios and differences: medians of the per-round ratios and differences",
      "  (cases take turns every batch, so each round's pair shared the machine's load); 'per round': their range.",
      "",
      "raw OTel also setting the 3 attributes observe() sets here (OpenInference kind, input, output);",
      "information only, not the goal reference:",
      table(attrsRows),
      "",
      `observe() with Cairn not configured (after shutdown()), ${offSyncCalls} sync / ${offAsyncCalls} async calls per round:`,
      table(offRows),
      "",
      spansLine,
      `took ${seconds.toFixed(1)} s`,
    ].join("\n"),
  );
  if (sink === 0) console.log("(no result was produced)");
  if (process.env.BENCH_VERBOSE) {
    for (const [group, results] of Object.entries({
      ...on,
      "off sync": off.sync,
      "off async": off.async,
    })) {
      for (const [id, result] of results) {
        console.log(`${group} ${id}: ${result.rounds.map((value) => ns(value)).join(" ")}`);
      }
    }
  }
}
