import type { ExportedSpan, OtelSpanKind } from "../../../core/wire/index.js";

/** An attribute value as the export format holds it. */
export type WireValue = ExportedSpan["attributes"][string];

/** Attributes with every OTLP `AnyValue` flattened to a {@link WireValue}. */
export type WireAttributes = Record<string, WireValue>;

/** A span event read from an OTLP request. */
export interface OtlpEventRecord {
  readonly name: string;
  readonly timeUnixNano: bigint;
  readonly attributes: WireAttributes;
}

/** A link to another span, ids as lowercase hex. */
export interface OtlpLinkRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: WireAttributes;
}

/** The instrumentation scope (library) that made a span. */
export interface OtlpScopeRecord {
  readonly name: string;
  readonly version: string | null;
}

/** A span read from an OTLP request, checked and with ids as lowercase hex. */
export interface OtlpSpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: WireAttributes;
  readonly events: readonly OtlpEventRecord[];
  /** `Status.code`: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string;
  /** OpenTelemetry's span kind; undefined when the span left it unspecified. */
  readonly spanKind: OtelSpanKind | undefined;
  /** Null when the scope has no name. */
  readonly scope: OtlpScopeRecord | null;
  readonly links: readonly OtlpLinkRecord[];
}

/** The spans of one OTLP `ResourceSpans`, across its scopes, with the resource's attributes. */
export interface OtlpResourceRecord {
  readonly attributes: WireAttributes;
  readonly spans: readonly OtlpSpanRecord[];
}
