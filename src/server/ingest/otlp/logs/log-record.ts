import type { ExportedSpanEvent } from "../../../../core/wire/index.js";
import type { WireAttributes } from "../otlp-records.js";
import type { Plain } from "../read-attributes.js";

/** A log record read from an OTLP logs request, checked, ids as lowercase hex. */
export interface OtlpLogRecord {
  readonly traceId: string;
  readonly spanId: string;
  /** `timeUnixNano`, else `observedTimeUnixNano`; 0 when the record has neither. */
  readonly timeUnixNano: bigint;
  /** `severityNumber`: 0 unspecified, 1–24 TRACE to FATAL4. */
  readonly severityNumber: number;
  readonly severityText: string;
  /** The `eventName` field (OTLP 1.5 and later); empty when the record has none. */
  readonly eventName: string;
  readonly body: Plain | undefined;
  readonly attributes: WireAttributes;
}

/** The log records of one request that can be attached to a span, and those refused. */
export interface OtlpLogsRequest {
  readonly records: readonly OtlpLogRecord[];
  /** Records without a trace and span id: Cairn keeps log records only on their span. */
  readonly rejected: number;
}

/** The log events of one span, keyed by the span's trace id (32 hex digits) and span id. */
export interface SpanLogEvents {
  readonly traceId: string;
  readonly spanId: string;
  readonly events: readonly ExportedSpanEvent[];
}
