import type { SpanKind } from "../../core/wire/span-kind.js";
import {
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
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value !== undefined) query.set(name, String(value));
  }
  return requestService(
    "GET",
    `/analytics/traces${query.size > 0 ? `?${query}` : ""}`,
    undefined,
    traceListSchema,
    { endpoint, apiKey, signal },
  );
}

/**
 * One trace: its summary, tags and scores, and its spans as a tree (each span's `children`).
 * `formatTraceTree()` prints the spans, flattened, as a tree.
 */
export function getTrace(traceId: string, options: ClientOptions = {}): Promise<TraceDetail> {
  return requestService(
    "GET",
    `/traces/${encodeURIComponent(traceId)}`,
    undefined,
    traceDetailSchema,
    options,
  );
}
