import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace";

/** What a watcher learns of each span of its trace as the span ends. */
export type TraceWatcher = (span: ReadableSpan) => void;

const watchers = new Map<string, TraceWatcher>();

/**
 * Calls `watcher` with every span of the trace `otelTraceId` (32 hex) that ends from now until
 * the returned function is called: how `runTests()` adds up a case's cost and finds the
 * documents its retrieval spans returned, whatever exporter is configured.
 */
export function watchTrace(otelTraceId: string, watcher: TraceWatcher): () => void {
  watchers.set(otelTraceId, watcher);
  return () => {
    if (watchers.get(otelTraceId) === watcher) watchers.delete(otelTraceId);
  };
}

/** The processor every runtime runs before its exporting one; costs a size check when idle. */
export const traceWatchProcessor: SpanProcessor = {
  onStart() {},
  onEnd(span) {
    if (watchers.size === 0) return;
    watchers.get(span.spanContext().traceId)?.(span);
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};
