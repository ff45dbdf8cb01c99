import type { ExportResult } from "@opentelemetry/core";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import type { ExportedSpan } from "../../core/wire/index.js";
import { attributes } from "../attributes.js";
import { formatTraceTree } from "./format-tree.js";
import { toExportedSpan } from "./to-exported-span.js";

// Traces whose root never ends (a span leaked by other code) must not grow memory forever.
const maxBufferedTraces = 1000;

/** Prints each trace as a tree (see `formatTraceTree`) once its root span has ended. */
export class ConsoleTreeExporter implements SpanExporter {
  private readonly pending = new Map<string, ExportedSpan[]>();
  /** A trace is printed as soon as it ends, not when a batch fills. */
  readonly preferredExportMode = "immediate";

  constructor(private readonly write: (text: string) => void = (text) => console.log(text)) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    for (const span of spans) {
      const exported = toExportedSpan(span);
      const trace = this.pending.get(exported.trace_id) ?? [];
      trace.push(exported);
      this.pending.delete(exported.trace_id);
      const root =
        exported.parent_span_id === null || exported.attributes[attributes.root] === true;
      if (root) this.print(trace);
      else this.pending.set(exported.trace_id, trace);
    }
    while (this.pending.size > maxBufferedTraces) {
      const [oldest] = this.pending.values();
      this.pending.delete((oldest as ExportedSpan[])[0]?.trace_id ?? "");
      this.print(oldest as ExportedSpan[]);
    }
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  // A flush must not print a trace whose root is still running: it would come out in pieces.
  async forceFlush(): Promise<void> {}

  /** Prints what is left at the end: spans whose root never ended. */
  async shutdown(): Promise<void> {
    for (const trace of this.pending.values()) this.print(trace);
    this.pending.clear();
  }

  private print(trace: ExportedSpan[]): void {
    this.write(formatTraceTree(trace));
  }
}
