// One long agent run as a single trace of any number of spans (the dashboard bench's 100, 10,000
// and 25,000), generated deterministically: a root agent, phases of 50 steps, and in each step
// an LLM call (model, usage, cost), tool calls, now and then a retrieval or a sub-agent with its
// own LLM call and tools; about 1% of tool calls fail. Up to six levels deep, as long agent loops
// are. Inputs and outputs of ~120 characters (GET /traces/{id}?payloads=false leaves them out).

import type { ExportBatch, ExportedSpan } from "../../src/core/wire/index.js";
import { models, resource, seededRandom, traceId } from "./spans.js";

/** Bump when the generated trace changes, so cached stores built from it are rebuilt. */
export const largeTraceVersion = 1;

const stepsPerPhase = 50;
const toolNames = ["search_web", "read_file", "run_python", "fetch_url", "write_file", "grep"];

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, "0");
}

interface Draft {
  readonly parent: string | null;
  readonly kind: ExportedSpan["kind"];
  readonly name: string;
  readonly startMs: number;
  endMs: number;
  extra: Partial<ExportedSpan>;
}

/**
 * The `spans` spans of trace `index` (salt as traceId takes it), starting at `startMs`, children
 * before their parents as the SDK exports them.
 */
export function makeLargeTrace(options: {
  salt: number;
  index: number;
  spans: number;
  startMs: number;
}): ExportedSpan[] {
  const { salt, index, spans: count, startMs } = options;
  const random = seededRandom(salt ^ (index * 7919));
  const trace = traceId(salt, index);
  const session = `ses_large_${hex(salt, 8)}${hex(index, 8)}`;
  const drafts = new Map<string, Draft>();
  let clock = startMs;
  const open = (parent: string | null, kind: ExportedSpan["kind"], name: string): string => {
    // 16 hex digits: the trace's index, then the span's number from 1 (all-zero is invalid).
    const id = `${hex(index % 2 ** 24, 6)}${hex(drafts.size + 1, 10)}`;
    drafts.set(id, { parent, kind, name, startMs: clock, endMs: clock, extra: {} });
    clock += 1 + random() * 5;
    return id;
  };
  const close = (id: string, workMs = 0): void => {
    clock += workMs;
    (drafts.get(id) as Draft).endMs = clock;
    clock += random() * 3;
  };
  const room = () => drafts.size < count;
  const llm = (parent: string) => {
    const model = models[Math.floor(random() * models.length)] as (typeof models)[number];
    const prompt = Math.floor(500 + random() * 6000);
    const completion = Math.floor(20 + random() * 400);
    const id = open(parent, "llm", "chat");
    close(id, 300 + random() * 2500);
    (drafts.get(id) as Draft).extra = {
      model: model.id,
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
      cost_usd: prompt * model.input + completion * model.output,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": model.id },
    };
  };
  const tool = (parent: string) => {
    const name = toolNames[Math.floor(random() * toolNames.length)] as string;
    const id = open(parent, "tool", name);
    close(id, 5 + random() * 600);
    const draft = drafts.get(id) as Draft;
    draft.extra = { attributes: { "tool.name": name } };
    if (random() < 0.01) {
      draft.extra = {
        ...draft.extra,
        status: "error",
        status_message: `${name} failed: exit code 1`,
        output: null,
      };
    }
  };

  const root = open(null, "agent", "research-agent");
  for (let phase = 0; room(); phase++) {
    const phaseId = open(root, "chain", `phase ${phase + 1}`);
    for (let step = 0; step < stepsPerPhase && room(); step++) {
      const stepId = open(phaseId, "chain", `step ${phase * stepsPerPhase + step + 1}`);
      if (room()) llm(stepId);
      if (room() && random() < 0.2) {
        const retrieval = open(stepId, "retrieval", "search_docs");
        close(retrieval, 20 + random() * 200);
      }
      for (let call = Math.floor(random() * 4); call > 0 && room(); call--) tool(stepId);
      if (room() && random() < 0.15) {
        const agent = open(stepId, "agent", "sub-agent");
        if (room()) llm(agent);
        for (let call = 2; call > 0 && room(); call--) tool(agent);
        close(agent);
      }
      close(stepId);
    }
    close(phaseId);
  }
  close(root);

  const text = (label: string, id: string) =>
    `${label} of ${id}: ${"the quick brown fox jumps over the lazy dog ".repeat(3)}`.slice(0, 120);
  return [...drafts.entries()].reverse().map(([id, draft]) => ({
    trace_id: trace,
    span_id: id,
    parent_span_id: draft.parent,
    name: draft.name,
    kind: draft.kind,
    start_time: new Date(Math.round(draft.startMs)).toISOString(),
    end_time: new Date(Math.round(draft.endMs)).toISOString(),
    duration_ms: Math.round(draft.endMs) - Math.round(draft.startMs),
    status: "ok",
    status_message: null,
    input: text("input", id),
    output: text("output", id),
    expected_output: null,
    model: null,
    session_id: session,
    tags: ["bench", "long-run"],
    version: "2.0.0",
    metadata: {},
    usage: null,
    cost_usd: null,
    attributes: {},
    events: [],
    ...draft.extra,
  }));
}

/** The trace as batches of at most `batchSpans` spans, for SpanStore.ingest. */
export function largeTraceBatches(
  spans: readonly ExportedSpan[],
  batchSpans: number,
): ExportBatch[] {
  const batches: ExportBatch[] = [];
  for (let first = 0; first < spans.length; first += batchSpans) {
    batches.push({ resource, spans: spans.slice(first, first + batchSpans) });
  }
  return batches;
}
