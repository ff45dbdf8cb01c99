import type { ExportedSpanEvent } from "../../../../core/wire/index.js";
import { logRecordEvent } from "./log-event.js";
import type { OtlpLogRecord, SpanLogEvents } from "./log-record.js";

/** Log records as span events, grouped by span in the order the spans first appear. */
export function spanLogEvents(
  records: readonly OtlpLogRecord[],
  receivedAt: Date,
): SpanLogEvents[] {
  const bySpan = new Map<
    string,
    { traceId: string; spanId: string; events: ExportedSpanEvent[] }
  >();
  for (const record of records) {
    const key = `${record.traceId}/${record.spanId}`;
    let span = bySpan.get(key);
    if (span === undefined) {
      span = { traceId: record.traceId, spanId: record.spanId, events: [] };
      bySpan.set(key, span);
    }
    span.events.push(logRecordEvent(record, receivedAt));
  }
  return [...bySpan.values()];
}
