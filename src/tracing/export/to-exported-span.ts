import type { Attributes, AttributeValue } from "@opentelemetry/api";
import { SpanStatusCode } from "@opentelemetry/api";
import { hrTimeToMilliseconds } from "@opentelemetry/core";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { toCairnTraceId } from "../../core/ids.js";
import type { ExportedSpan, SpanKind } from "../../core/wire/index.js";
import { parseSpanKind } from "../../core/wire/index.js";
import { parseMetadata } from "../../core/wire/metadata.js";
import { attributes as names } from "../attributes.js";

// Attributes lifted into fields of their own, so they are not repeated in `attributes`.
const lifted = new Set<string>([
  names.openInferenceKind,
  names.inputValue,
  names.outputValue,
  names.expectedOutput,
  names.llmModelName,
  names.genAiRequestModel,
  names.sessionId,
  names.genAiConversationId,
  names.tags,
  names.version,
  names.metadata,
  names.llmPromptTokens,
  names.llmCompletionTokens,
  names.llmTotalTokens,
  names.genAiInputTokens,
  names.genAiOutputTokens,
  names.costUsd,
  names.llmCostTotal,
]);

/** A finished OpenTelemetry span in Cairn's export format (docs/export-format.md). */
export function toExportedSpan(span: ReadableSpan): ExportedSpan {
  const context = span.spanContext();
  const values = span.attributes;
  const rest: ExportedSpan["attributes"] = {};
  for (const [key, value] of Object.entries(values)) {
    if (!lifted.has(key) && value !== undefined) rest[key] = toWireValue(value);
  }
  const startMs = hrTimeToMilliseconds(span.startTime);
  const durationMs = hrTimeToMilliseconds(span.duration);
  return {
    trace_id: toCairnTraceId(context.traceId),
    span_id: context.spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    kind: kindOf(values),
    start_time: new Date(startMs).toISOString(),
    end_time: new Date(startMs + durationMs).toISOString(),
    duration_ms: Math.round(durationMs * 1000) / 1000,
    status: span.status.code === SpanStatusCode.ERROR ? "error" : "ok",
    status_message: span.status.message ?? null,
    input: text(values[names.inputValue]),
    output: text(values[names.outputValue]),
    expected_output: text(values[names.expectedOutput]),
    model: text(values[names.llmModelName]) ?? text(values[names.genAiRequestModel]),
    session_id: text(values[names.sessionId]) ?? text(values[names.genAiConversationId]),
    tags: stringArray(values[names.tags]),
    version: text(values[names.version]),
    metadata: parseMetadata(values[names.metadata]),
    usage: usageOf(values),
    cost_usd: numberOf(values[names.costUsd]) ?? null,
    attributes: rest,
    events: span.events.map((event) => ({
      name: event.name,
      time: new Date(hrTimeToMilliseconds(event.time)).toISOString(),
      attributes: wireAttributes(event.attributes ?? {}),
    })),
  };
}

// OpenInference's kinds are Cairn's in capitals (RETRIEVER for retrieval); others read as chain.
function kindOf(values: Attributes): SpanKind {
  const kind = values[names.openInferenceKind];
  return (typeof kind === "string" ? parseSpanKind(kind) : undefined) ?? "chain";
}

function usageOf(values: Attributes): ExportedSpan["usage"] {
  const prompt = numberOf(values[names.llmPromptTokens] ?? values[names.genAiInputTokens]);
  const completion = numberOf(values[names.llmCompletionTokens] ?? values[names.genAiOutputTokens]);
  if (prompt === undefined || completion === undefined) return null;
  const total = numberOf(values[names.llmTotalTokens]) ?? prompt + completion;
  const cached = numberOf(values[names.llmCachedTokens] ?? values[names.genAiCachedTokens]);
  const reasoning = numberOf(
    values[names.llmReasoningTokens] ?? values[names.genAiReasoningTokens],
  );
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    ...(cached === undefined ? {} : { cached_tokens: cached }),
    ...(reasoning === undefined ? {} : { reasoning_tokens: reasoning }),
  };
}

function text(value: AttributeValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function numberOf(value: AttributeValue | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function stringArray(value: AttributeValue | undefined): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

function wireAttributes(values: Attributes): ExportedSpan["attributes"] {
  const converted: ExportedSpan["attributes"] = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) converted[key] = toWireValue(value);
  }
  return converted;
}

// OpenTelemetry arrays may hold nulls; they keep their positions (undefined becomes null).
function toWireValue(value: AttributeValue): ExportedSpan["attributes"][string] {
  if (!Array.isArray(value)) return value as string | number | boolean;
  const items = value.map((item) => item ?? null);
  const present = items.filter((item) => item !== null);
  if (present.every((item) => typeof item === "number")) return items as Array<number | null>;
  if (present.every((item) => typeof item === "boolean")) return items as Array<boolean | null>;
  return items.map((item) => (item === null ? null : String(item)));
}
