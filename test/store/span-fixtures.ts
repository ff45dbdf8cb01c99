// Spans for the shared store suite: valid spans in the export format, and batches of them.
import type { ExportBatch, ExportedSpan } from "../../src/core/wire/index.js";
import exportSpan from "../fixtures/export-span.json" with { type: "json" };

let counter = 0;

/** A trace id (tr_ and 32 hex digits) made of `prefix` and the number `index`. */
export function traceIdOf(prefix: string, index: number): string {
  return `tr_${prefix}${index.toString(16).padStart(32 - prefix.length, "0")}`;
}

/** A valid span (test/fixtures/export-span.json, on 2026-11-20, in trace a0…01) with a new span id, changed by `fields`. */
export function spanOf(fields: Partial<ExportedSpan> = {}): ExportedSpan {
  counter++;
  return {
    ...(structuredClone(exportSpan) as ExportedSpan),
    trace_id: traceIdOf("a", 1),
    span_id: counter.toString(16).padStart(16, "0"),
    ...fields,
  };
}

/** A batch of `spans` from the service `service`. */
export function batchOf(spans: ExportedSpan[], service = "test"): ExportBatch {
  return { resource: { service_name: service, sdk_name: "cairn", sdk_version: "0.1.0" }, spans };
}

/** Microseconds since the epoch of a UTC day (YYYY-MM-DD) at midnight. */
export function dayUs(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) * 1000;
}
