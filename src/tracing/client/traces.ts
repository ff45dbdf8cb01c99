import type { SpanKind } from "../../core/wire/span-kind.js";
import {
  type StoredSpan,
  storedSpanSchema,
  type TraceDetail,
  type TraceList,
  traceDetailSchema,
  traceListSchema,
} from "../../core/wire/traces.js";
import { type ClientOptions, requestService } from "./request.js";

/**
 * Which traces {@link listTraces} returns, in the API's names. Dates are whole UTC days
 * (`YYYY-MM-DD`), both included; without them, the last 30 days.
 */
export interface ListTracesOptions extends ClientOptions {
  period_start?: string;
  period_end?: string;
  session_id?: string;
  /** Traces with this tag. */
  tag?: string;
  /** Traces of this app version. */
  version?: string;
  /** Traces whose root span is of this kind. */
  kind?: SpanKind;
  /** `error` when any span failed. */
  status?: "ok" | "error";
  /** Traces with a span that called this model. */
  model?: string;
  /** Traces whose root span has this name. */
  name?: string;
  /** Traces with a span from this service (`service.name` of the resource that sent it). */
  service?: string;
  /** Default `time`. */
  sort?: "time" | "latency" | "cost";
  /** Default `desc`. */
  order?: "asc" | "desc";
  /** 1 to 200; default 50. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/**
 * A page of the project's traces, newest first unless `sort` and `order` say otherwise: each
 * with its root span's name and kind, duration, status, span count, tokens and cost.
 * `next_cursor` fetches the next page.
 *
 * @example
 * const { traces } = await listTraces({ status: "error", limit: 20 });
 * for (const trace of traces) console.log(trace.trace_id, trace.name, trace.duration_ms);
 */
export function listTraces(options: ListTracesOptions = {}): Promise<TraceList> {
  const { endpoint, apiKey, signal, ...filters } = options;
  return requestService(
    "GET",
    `/analytics/traces${queryString(filters)}`,
    undefined,
    traceListSchema,
    { endpoint, apiKey, signal },
  );
}

/** Options of {@link getTrace}. */
export interface GetTraceOptions extends ClientOptions {
  /**
   * `false`: spans without input, output, expected output and large attribute values (each
   * span names them in `omitted`), so a trace of thousands of spans stays small; {@link getSpan}
   * returns one span whole. Default `true`.
   */
  payloads?: boolean;
}

/**
 * One trace: its summary, tags and scores, and its spans as a tree (each span's `children`).
 * `formatTraceTree()` prints the spans, flattened, as a tree.
 *
 * @example
 * const tree = await getTrace(traceId, { payloads: false });
 * const first = await getSpan(traceId, tree.spans[0].span_id);
 */
export function getTrace(traceId: string, options: GetTraceOptions = {}): Promise<TraceDetail> {
  const { endpoint, apiKey, signal, payloads } = options;
  return requestService(
    "GET",
    `/traces/${encodeURIComponent(traceId)}${queryString({ payloads })}`,
    undefined,
    traceDetailSchema,
    { endpoint, apiKey, signal },
  );
}

/** One whole span of a trace: input, output, attributes, events and the resource that sent it. */
export function getSpan(
  traceId: string,
  spanId: string,
  options: ClientOptions = {},
): Promise<StoredSpan> {
  return requestService(
    "GET",
    `/traces/${encodeURIComponent(traceId)}/spans/${encodeURIComponent(spanId)}`,
    undefined,
    storedSpanSchema,
    options,
  );
}

/** `?name=value&…` of the values given, or nothing when none is. */
export function queryString(values: Readonly<Record<string, unknown>>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) query.set(name, String(value));
  }
  return query.size > 0 ? `?${query}` : "";
}
