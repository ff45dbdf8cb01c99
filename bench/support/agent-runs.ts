// A large store's bulk: agent runs of 10 spans (./spans.ts) written through SpanStore.ingest in
// transactions of `batchSpans` spans (the service's own ingest path without HTTP), spread evenly
// (with the generator's jitter) from `fromMs` to a minute before `endMs` and stored in time
// order, as a live service receives them. Used by the analytics and dashboard benches.

import type { ExportBatch } from "../../src/core/wire/index.js";
import type { SpanStore } from "../../src/server/store/span-store.js";
import { makeBatches } from "./spans.js";

/** Stores a batch, or throws when the store took less than all of it. */
export function storeBatch(store: SpanStore, projectId: string, batch: ExportBatch): void {
  const result = store.ingest(projectId, batch);
  if (result.accepted !== batch.spans.length) {
    throw new Error(`bench: the build stored ${result.accepted} of ${batch.spans.length} spans`);
  }
}

interface AgentRunsOptions {
  readonly salt: number;
  readonly runs: number;
  readonly fromMs: number;
  readonly endMs: number;
  readonly batchSpans: number;
}

export function storeAgentRuns(
  store: SpanStore,
  projectId: string,
  options: AgentRunsOptions,
): void {
  for (const batch of agentRunBatches(options)) storeBatch(store, projectId, batch);
}

/** The batches storeAgentRuns stores, in its order: the same spans for another store. */
export function* agentRunBatches(options: AgentRunsOptions): Generator<ExportBatch> {
  const { salt, runs, fromMs, endMs, batchSpans } = options;
  const stepMs = (endMs - 60_000 - fromMs) / runs;
  const runsPerChunk = 1_000;
  for (let first = 0; first < runs; first += runsPerChunk) {
    yield* makeBatches({
      salt,
      firstIndex: first,
      traces: Math.min(runsPerChunk, runs - first),
      batchSpans,
      startMs: (index) => fromMs + index * stepMs,
      seed: first + 1,
    });
  }
}

/**
 * Adds every stored span to the trace search index, as a service that has run a while has it
 * (a service started on a store it has not indexed indexes it in the background, which would
 * share the processor with what the bench measures).
 */
export function indexForSearch(store: SpanStore): void {
  while (store.indexForSearch(20_000) > 0) {
    // Another chunk.
  }
}
