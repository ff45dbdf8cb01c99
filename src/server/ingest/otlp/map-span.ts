import { toCairnTraceId } from "../../../core/ids.js";
import type { ExportedSpan } from "../../../core/wire/index.js";
import { parseMetadata } from "../../../core/wire/metadata.js";
import { attributes as names } from "../../../tracing/attributes.js";
import type { PriceTable } from "../../../tracing/prices.js";
import { AttributeReader, amount, count, name, strings, text } from "./attribute-reader.js";
import type { OtlpSpanRecord, WireAttributes } from "./otlp-records.js";
import { spanKindOf } from "./span-kind-of.js";

// Aliases in order of preference. OpenInference names come first, as the SDK writes them.
const modelKeys = [
  names.llmModelName,
  "embedding.model_name",
  names.genAiRequestModel,
  "gen_ai.response.model",
];
const sessionKeys = [names.sessionId, names.genAiConversationId];
const promptKeys = [names.llmPromptTokens, names.genAiInputTokens, "gen_ai.usage.prompt_tokens"];
const completionKeys = [
  names.llmCompletionTokens,
  names.genAiOutputTokens,
  "gen_ai.usage.completion_tokens",
];
const inputKeys = [names.inputValue, "gen_ai.input.messages"];
const outputKeys = [names.outputValue, "gen_ai.output.messages"];
const costKeys = [names.costUsd, names.llmCostTotal];
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
  const kind = spanKindOf(reader);
  const model = reader.take(modelKeys, name) ?? null;
  const usage = usageOf(reader);
  const extra: WireAttributes = {};
  if (context.serviceName !== undefined) extra["service.name"] = context.serviceName;
  let cost = reader.take(costKeys, amount) ?? null;
  // Only model calls are priced: a chain that reports its children's tokens would count twice.
  if (cost === null && usage !== null && (kind === "llm" || kind === "embedding")) {
    const computed = context.prices.cost(model ?? undefined, usage);
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
  return {
    trace_id: toCairnTraceId(span.traceId),
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: spanName(span.name),
    kind,
    start_time: new Date(startMs).toISOString(),
    end_time: new Date(startMs + durationMs).toISOString(),
    duration_ms: Math.round(durationMs * 1000) / 1000,
    status: span.statusCode === 2 ? "error" : "ok",
    status_message: span.statusMessage === "" ? null : span.statusMessage,
    input: reader.take(inputKeys, text) ?? null,
    output: reader.take(outputKeys, text) ?? null,
    expected_output: reader.take([names.expectedOutput], text) ?? null,
    model,
    session_id: reader.take(sessionKeys, name) ?? null,
    tags: reader.take([names.tags], strings) ?? [],
    version: reader.take([names.version], text) ?? null,
    metadata: parseMetadata(reader.take([names.metadata], text)),
    usage,
    cost_usd: cost,
    attributes: reader.rest(extra),
    events: span.events.map((event) => ({
      name: spanName(event.name),
      time: new Date(toMilliseconds(toHrTime(event.timeUnixNano))).toISOString(),
      attributes: event.attributes,
    })),
  };
}

// Either count may be missing (an embedding reports only its input); the other is then 0.
function usageOf(reader: AttributeReader): ExportedSpan["usage"] {
  const prompt = reader.find(promptKeys, count);
  const completion = reader.find(completionKeys, count);
  if (prompt === undefined && completion === undefined) return null;
  reader.lift([...(prompt?.keys ?? []), ...(completion?.keys ?? [])]);
  const promptTokens = prompt?.value ?? 0;
  const completionTokens = completion?.value ?? 0;
  const total = reader.take([names.llmTotalTokens], count) ?? promptTokens + completionTokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: total,
  };
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
