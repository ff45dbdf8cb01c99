import type { ExportResult } from "@opentelemetry/core";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import type { ExportedSpan } from "../core/wire/index.js";
import { toExportedSpan } from "../tracing/export/to-exported-span.js";

/** An exporter that keeps finished spans in memory, for your own tests. */
export interface MemoryExporter extends SpanExporter {
  /** The finished spans, oldest first, in the export format of docs/export-format.md. */
  spans(): ExportedSpan[];
  /** Forgets every span recorded so far. */
  reset(): void;
  /** Spans are recorded as they end, so tests can read them right after a call returns. */
  readonly preferredExportMode: "immediate";
}

/**
 * @example
 * const exporter = memoryExporter();
 * configure({ exporter });
 * await answer("hi");
 * expect(exporter.spans()[0].kind).toBe("llm");
 */
export function memoryExporter(): MemoryExporter {
  let recorded: ExportedSpan[] = [];
  return {
    preferredExportMode: "immediate",
    export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
      for (const span of spans) recorded.push(toExportedSpan(span));
      resultCallback({ code: ExportResultCode.SUCCESS });
    },
    async shutdown() {},
    async forceFlush() {},
    spans: () => [...recorded],
    reset: () => {
      recorded = [];
    },
  };
}
