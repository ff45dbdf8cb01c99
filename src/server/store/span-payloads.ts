import type { ExportedSpan } from "../../core/wire/index.js";
import type { SpanRow } from "./span-rows.js";

/** Longest attribute (metadata) value, as JSON, that a span without its payloads keeps. */
export const smallValueChars = 256;

/**
 * The columns of a span without its payloads: input and output are only said to be there (1 or
 * 0, on SQLite and PostgreSQL alike).
 */
export const spanColumnsWithoutPayloads = `trace_id, span_id, parent_span_id, name, kind, start_us,
  end_us, duration_us, status, status_message, NULL AS input, NULL AS output,
  NULL AS expected_output, model, session_id, version, tags, metadata, attributes, events,
  prompt_tokens, completion_tokens, total_tokens, cost_usd, cached_tokens, reasoning_tokens,
  span_kind, scope, links, service_name, resource,
  CASE WHEN input IS NULL THEN 0 ELSE 1 END AS has_input,
  CASE WHEN output IS NULL THEN 0 ELSE 1 END AS has_output,
  CASE WHEN expected_output IS NULL THEN 0 ELSE 1 END AS has_expected_output`;

/** A row read with {@link spanColumnsWithoutPayloads}. */
export interface RowWithoutPayloads extends SpanRow {
  has_input: number;
  has_output: number;
  has_expected_output: number;
}

/** What a span without its payloads left out: `input`, `attributes.<key>`, … */
export type Omitted = string[];

/**
 * The span with its large attribute, metadata and event attribute values left out, and the
 * names of all it left out (with input and output, which the row never read).
 */
export function withoutLargeValues(
  span: ExportedSpan,
  row: RowWithoutPayloads,
): ExportedSpan & { omitted: Omitted } {
  const omitted: Omitted = [];
  if (row.has_input === 1) omitted.push("input");
  if (row.has_output === 1) omitted.push("output");
  if (row.has_expected_output === 1) omitted.push("expected_output");
  const attributes = smallValues(span.attributes, "attributes", omitted);
  const metadata = smallValues(span.metadata, "metadata", omitted);
  const events = span.events.map((event, index) => ({
    ...event,
    attributes: smallValues(event.attributes, `events.${index}.attributes`, omitted),
  }));
  return { ...span, attributes, metadata, events, omitted };
}

function smallValues<T>(
  values: Readonly<Record<string, T>>,
  path: string,
  omitted: Omitted,
): Record<string, T> {
  const kept: Record<string, T> = {};
  for (const [key, value] of Object.entries(values)) {
    if (JSON.stringify(value).length > smallValueChars) omitted.push(`${path}.${key}`);
    else kept[key] = value;
  }
  return kept;
}
