import type { ExportedSpan, OtelSpanKind, SpanResource } from "../../core/wire/index.js";

/** A row of the spans table. */
export interface SpanRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  start_us: number;
  end_us: number;
  duration_us: number;
  status: string;
  status_message: string | null;
  input: string | null;
  output: string | null;
  expected_output: string | null;
  model: string | null;
  session_id: string | null;
  version: string | null;
  tags: string;
  metadata: string;
  attributes: string;
  events: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  span_kind: string | null;
  scope: string | null;
  links: string | null;
  service_name: string;
  resource: string | null;
}

/** A stored span: the export format it arrived in, with the resource that sent it. */
export type StoredSpan = ExportedSpan & { resource: SpanResource };

/** Microseconds since the epoch of an ISO time (the wire carries milliseconds). */
export function isoToMicros(iso: string): number {
  return Date.parse(iso) * 1000;
}

export function microsToIso(micros: number): string {
  return new Date(Math.floor(micros / 1000)).toISOString();
}

/** The span as the API returns it: the export format it arrived in, and its resource. */
export function rowToSpan(row: SpanRow): StoredSpan {
  return {
    trace_id: `tr_${row.trace_id}`,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    name: row.name,
    kind: row.kind as ExportedSpan["kind"],
    start_time: microsToIso(row.start_us),
    end_time: microsToIso(row.end_us),
    duration_ms: row.duration_us / 1000,
    status: row.status as ExportedSpan["status"],
    status_message: row.status_message,
    input: row.input,
    output: row.output,
    expected_output: row.expected_output,
    model: row.model,
    session_id: row.session_id,
    tags: JSON.parse(row.tags) as string[],
    version: row.version,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    usage:
      row.prompt_tokens === null || row.completion_tokens === null
        ? null
        : {
            prompt_tokens: row.prompt_tokens,
            completion_tokens: row.completion_tokens,
            total_tokens: row.total_tokens ?? row.prompt_tokens + row.completion_tokens,
            ...(row.cached_tokens === null ? {} : { cached_tokens: row.cached_tokens }),
            ...(row.reasoning_tokens === null ? {} : { reasoning_tokens: row.reasoning_tokens }),
          },
    cost_usd: row.cost_usd,
    attributes: JSON.parse(row.attributes) as ExportedSpan["attributes"],
    events: JSON.parse(row.events) as ExportedSpan["events"],
    ...(row.span_kind === null ? {} : { span_kind: row.span_kind as OtelSpanKind }),
    ...(row.scope === null ? {} : { scope: JSON.parse(row.scope) as ExportedSpan["scope"] }),
    ...(row.links === null ? {} : { links: JSON.parse(row.links) as ExportedSpan["links"] }),
    resource: {
      service_name: row.service_name,
      attributes:
        row.resource === null ? {} : (JSON.parse(row.resource) as SpanResource["attributes"]),
    },
  };
}
