import { toCairnTraceId } from "../../../core/ids.js";
import type { ExportedSpan } from "../../../core/wire/index.js";
import { attributes as names } from "../../../tracing/attributes.js";
import type { PriceTable } from "../../../tracing/prices.js";
import { AttributeReader, amount, text } from "./attribute-reader.js";
import { type MappedUsage, mapConventions } from "./conventions/index.js";
import type { OtlpSpanRecord, WireAttributes } from "./otlp-records.js";

// Cairn's own cost attribute first, as Cairn's SDK writes it; then the conventions' cost.
const costKeys = [names.costUsd];
const maxNameLength = 1024;

/** What the mapping needs besides the span. */
export interface MapSpanContext {
  /** `service.name` of the span's resource, copied into attributes; undefined when absent. */
  readonly serviceName: string | undefined;
  readonly prices: PriceTable;
}

/**
 * An OTLP span in Cairn's export format, mapped as `toExportedSpan` maps the SDK's own spans,
 * so a span sent over OTLP and the same span sent as Cairn JSON give the same record.
 */
export function mapOtlpSpan(span: OtlpSpanRecord, context: MapSpanContext): ExportedSpan {
  const reader = new AttributeReader(span.attributes);
  const mapped = mapConventions(reader, span);
  const { kind, usage } = mapped;
  const model = mapped.model ?? null;
  const extra: WireAttributes = {};
  if (context.serviceName !== undefined) extra["service.name"] = context.serviceName;
  if (mapped.user !== undefined) extra["user.id"] = mapped.user;
  const wireUsage = usage === undefined ? null : toWireUsage(usage);
  let cost = reader.take(costKeys, amount) ?? mapped.cost ?? null;
  // Only model calls are priced: a chain that reports its children's tokens would count twice.
  if (cost === null && wireUsage !== null && (kind === "llm" || kind === "embedding")) {
    const computed = context.prices.cost(model ?? undefined, wireUsage);
    if (computed.usd !== undefined) cost = computed.usd;
    else extra[names.costUnavailable] = computed.unavailable;
  }
  const start = toHrTime(span.startTimeUnixNano);
  const duration = toHrTime(
    span.endTimeUnixNano > span.startTimeUnixNano
      ? span.endTimeUnixNano - span.startTimeUnixNano
      : 0n,
  );
  const startMs = toMilliseconds(start);
  const durationMs = toMilliseconds(duration);
  // A GenAI `error.type` marks a failed call even when the status was left unset.
  const failed = span.statusCode === 2 || (span.statusCode === 0 && mapped.error !== undefined);
  return {
    trace_id: toCairnTraceId(span.traceId),
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: spanName(mapped.name ?? span.name),
    kind,
    start_time: new Date(startMs).toISOString(),
    end_time: new Date(startMs + durationMs).toISOString(),
    duration_ms: Math.round(durationMs * 1000) / 1000,
    status: failed ? "error" : "ok",
    status_message: failed ? errorMessage(span, mapped.error) : nonEmpty(span.statusMessage),
    input: mapped.input ?? null,
    output: mapped.output ?? null,
    expected_output: reader.take([names.expectedOutput], text) ?? null,
    model,
    session_id: mapped.session ?? null,
    tags: mapped.tags ?? [],
    version: reader.take([names.version], text) ?? null,
    metadata: mapped.metadata ?? {},
    usage: wireUsage,
    cost_usd: cost,
    attributes: reader.rest(extra),
    events: span.events.map((event) => ({
      name: spanName(event.name),
      time: new Date(toMilliseconds(toHrTime(event.timeUnixNano))).toISOString(),
      attributes: event.attributes,
    })),
    ...(span.spanKind === undefined ? {} : { span_kind: span.spanKind }),
    ...(span.scope === null ? {} : { scope: span.scope }),
    ...(span.links.length === 0
      ? {}
      : {
          links: span.links.map((link) => ({
            trace_id: toCairnTraceId(link.traceId),
            span_id: link.spanId,
            attributes: link.attributes,
          })),
        }),
  };
}

function toWireUsage(usage: MappedUsage): NonNullable<ExportedSpan["usage"]> {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    // The sum of two counts up to 2^53 - 1 stops there, as a trace's sums do (a number past it
    // is stored and then cannot be read back).
    total_tokens: usage.total ?? Math.min(usage.prompt + usage.completion, Number.MAX_SAFE_INTEGER),
    ...(usage.cached === undefined ? {} : { cached_tokens: usage.cached }),
    ...(usage.reasoning === undefined ? {} : { reasoning_tokens: usage.reasoning }),
  };
}

// The status message, else the first recorded exception's, else the GenAI error type.
function errorMessage(span: OtlpSpanRecord, errorType: string | undefined): string | null {
  const exception = span.events.find((event) => event.name === "exception")?.attributes;
  const message = exception?.["exception.message"];
  return (
    nonEmpty(span.statusMessage) ??
    (typeof message === "string" ? nonEmpty(message) : null) ??
    errorType ??
    null
  );
}

function nonEmpty(value: string): string | null {
  return value === "" ? null : value;
}

// OTLP says an empty name is an unknown one; Cairn's format needs 1–1024 characters.
function spanName(value: string): string {
  if (value === "") return "unknown";
  if (value.length <= maxNameLength) return value;
  const cut = value.slice(0, maxNameLength);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

// The SDK's HrTime split and its millisecond arithmetic (hrTimeToMilliseconds), so times
// round exactly as `toExportedSpan` rounds them.
function toHrTime(nanos: bigint): [number, number] {
  return [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)];
}

function toMilliseconds([seconds, nanos]: [number, number]): number {
  return seconds * 1e3 + nanos / 1e6;
}
