// Realistic spans in the export format (docs/export-format.md), generated deterministically: a
// trace is an agent run of 10 spans (the root agent, a retrieval, 3 LLM calls with model, usage
// and cost, 4 tool calls and a chain), with ~200-character inputs and outputs, a session, a
// version, tags, metadata and a few attributes. About 3% of traces have a failing tool call (with
// an exception event), half of which fail the whole run.

import type { ExportBatch, ExportedSpan } from "../../src/core/wire/index.js";

/** Bump when the generated data changes, so cached stores built from it are rebuilt. */
export const generatorVersion = 2;

export const spansPerTrace = 10;

export const resource: ExportBatch["resource"] = {
  service_name: "support-bot",
  sdk_name: "cairn",
  sdk_version: "0.1.0",
};

/** Models with their USD price per token (input, output). */
export const models = [
  { id: "gpt-4o-mini", input: 0.15e-6, output: 0.6e-6 },
  { id: "gpt-4o", input: 2.5e-6, output: 10e-6 },
  { id: "claude-3-5-sonnet", input: 3e-6, output: 15e-6 },
  { id: "claude-3-5-haiku", input: 0.8e-6, output: 4e-6 },
  { id: "llama-3.1-70b", input: 0.6e-6, output: 0.6e-6 },
] as const;

export const versions = ["1.4.0", "1.5.0", "1.5.1", "2.0.0"] as const;
export const tagPool = ["prod", "support", "billing", "search", "beta", "eu", "us", "mobile"];
const rootNames = ["support-agent", "billing-agent", "search-agent", "triage-agent"];
const toolNames = ["search_kb", "get_order", "issue_refund", "send_email", "lookup_user"];
const channels = ["web", "email", "slack", "api"];

const words = (
  "the order refund customer arrive within business days policy account invoice shipping " +
  "address payment card declined support ticket priority agent answer question please check " +
  "status tracking number warehouse delayed apologise inconvenience update email confirm " +
  "subscription plan upgrade downgrade cancel renewal receipt tax region europe united states"
).split(" ");

/** mulberry32: a small, fast, seeded PRNG, so every run generates the same data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function between(random: () => number, low: number, high: number): number {
  return low + random() * (high - low);
}

/** Words until about `length` characters. */
function text(random: () => number, length: number, prefix = ""): string {
  let out = prefix;
  while (out.length < length) out += `${out.length === 0 ? "" : " "}${pick(random, words)}`;
  return out;
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, "0");
}

/** `tr_` + 32 hex: a run salt (8 digits) and the trace's index (24 digits). */
export function traceId(salt: number, index: number): string {
  return `tr_${hex(salt, 8)}${hex(index, 24)}`;
}

/**
 * The 10 spans of trace `index`, starting at `startMs`, children before their parent (as the SDK
 * exports them). `salt` keeps traces of different runs or warm-ups apart.
 */
export function makeTrace(
  salt: number,
  index: number,
  startMs: number,
  random: () => number,
): ExportedSpan[] {
  const trace = traceId(salt, index);
  // n + 1: an all-zero id is OpenTelemetry's invalid id, which ingest refuses.
  const spanId = (n: number) => `${hex(index % 2 ** 48, 14)}${hex(n + 1, 2)}`;
  const rootId = spanId(0);
  const version = pick(random, versions);
  const session = `ses_${hex(salt, 8)}${hex(Math.floor(index / 8), 16)}`;
  const tags = [pick(random, tagPool.slice(0, 2)), pick(random, tagPool.slice(2, 5))];
  if (random() < 0.3) tags.push(pick(random, tagPool.slice(5)));
  const model = pick(random, models);
  const failing = random() < 0.03 ? 5 + Math.floor(random() * 4) : -1;
  const rootFails = failing >= 0 && random() < 0.5;
  const question = text(random, 200, `[${hex(index, 6)}] `);

  const spans: ExportedSpan[] = [];
  let cursor = startMs + between(random, 5, 40);
  const child = (
    n: number,
    kind: ExportedSpan["kind"],
    name: string,
    durationMs: number,
    extra: Partial<ExportedSpan> = {},
  ): void => {
    const start = Math.round(cursor);
    const duration = Math.round(durationMs * 1000) / 1000;
    cursor = start + duration + between(random, 1, 20);
    const fails = n === failing;
    spans.push({
      trace_id: trace,
      span_id: spanId(n),
      parent_span_id: rootId,
      name,
      kind,
      start_time: new Date(start).toISOString(),
      end_time: new Date(Math.round(start + duration)).toISOString(),
      duration_ms: duration,
      status: fails ? "error" : "ok",
      status_message: fails ? `${name} failed: upstream returned 503` : null,
      input: text(random, 200),
      output: fails ? null : text(random, 200),
      expected_output: null,
      model: null,
      session_id: session,
      tags,
      version,
      metadata: {},
      usage: null,
      cost_usd: null,
      attributes: {},
      events: fails
        ? [
            {
              name: "exception",
              time: new Date(Math.round(start + duration)).toISOString(),
              attributes: {
                "exception.type": "UpstreamError",
                "exception.message": "upstream returned 503",
                "exception.stacktrace": `UpstreamError: upstream returned 503\n    at ${name} (tools.ts:42:11)`,
              },
            },
          ]
        : [],
      ...extra,
    });
  };
  const llm = (n: number, llmModel: (typeof models)[number]) => {
    const prompt = Math.floor(between(random, 200, 2400));
    const completion = Math.floor(between(random, 20, 500));
    child(n, "llm", "chat", between(random, 300, 4000), {
      model: llmModel.id,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
      cost_usd: prompt * llmModel.input + completion * llmModel.output,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": llmModel.id.startsWith("gpt") ? "openai" : "anthropic",
        "gen_ai.request.temperature": 0.2,
      },
    });
  };
  const tool = (n: number) => {
    const name = pick(random, toolNames);
    child(n, "tool", name, between(random, 20, 900), { attributes: { "tool.name": name } });
  };

  child(1, "retrieval", "search_docs", between(random, 30, 400), {
    attributes: { "retrieval.top_k": 5, "retrieval.index": "kb-v3" },
  });
  llm(2, model);
  tool(3);
  tool(4);
  llm(5, model);
  tool(6);
  tool(7);
  child(8, "chain", "format_reply", between(random, 1, 30));
  llm(9, random() < 0.5 ? model : (models[0] as (typeof models)[number]));

  const end = Math.round(cursor + between(random, 1, 30));
  const start = Math.round(startMs);
  spans.push({
    trace_id: trace,
    span_id: rootId,
    parent_span_id: null,
    name: pick(random, rootNames),
    kind: "agent",
    start_time: new Date(start).toISOString(),
    end_time: new Date(end).toISOString(),
    duration_ms: end - start,
    status: rootFails ? "error" : "ok",
    status_message: rootFails ? "tool call failed" : null,
    input: question,
    output: rootFails ? null : text(random, 200),
    expected_output: null,
    model: null,
    session_id: session,
    tags,
    version,
    metadata: { user_id: `usr_${hex(index % 5000, 6)}`, channel: pick(random, channels) },
    usage: null,
    cost_usd: null,
    attributes: {
      "app.tenant": `tenant-${index % 40}`,
      "app.region": tags.includes("eu") ? "eu" : "us",
    },
    events: [],
  });
  return spans;
}

/**
 * `traces` consecutive traces from `firstIndex` as batches of `batchSpans` spans (a multiple
 * of 10), trace `i` starting at `startMs(i)`.
 */
export function makeBatches(options: {
  salt: number;
  firstIndex: number;
  traces: number;
  batchSpans: number;
  startMs: (index: number) => number;
  seed: number;
}): ExportBatch[] {
  const random = seededRandom(options.seed);
  const tracesPerBatch = options.batchSpans / spansPerTrace;
  const batches: ExportBatch[] = [];
  for (let done = 0; done < options.traces; done += tracesPerBatch) {
    const spans: ExportedSpan[] = [];
    const count = Math.min(tracesPerBatch, options.traces - done);
    for (let i = 0; i < count; i++) {
      const index = options.firstIndex + done + i;
      spans.push(...makeTrace(options.salt, index, options.startMs(index), random));
    }
    batches.push({ resource, spans });
  }
  return batches;
}
