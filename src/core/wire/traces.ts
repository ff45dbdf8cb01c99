import { z } from "zod";
import {
  type ExportedSpan,
  exportedSpanSchema,
  type SpanResource,
  spanResourceSchema,
} from "./export-batch.js";
import { scoreSchema } from "./scores.js";
import { spanKinds } from "./span-kind.js";

/** Tokens of the model calls (llm and embedding spans) of a trace or session. */
export const usageTotalsSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

/** A trace as the trace list shows it: its root, duration, status, tokens and cost. */
export const traceSummarySchema = z.object({
  trace_id: z.string().describe("tr_ + 32 hex"),
  name: z.string().nullable().describe("name of the root span; null until it arrives"),
  kind: z.enum(spanKinds).nullable(),
  root_span_id: z.string().nullable(),
  start_time: z.string(),
  end_time: z.string(),
  duration_ms: z.number(),
  status: z.enum(["ok", "error"]).describe("error when any span failed"),
  span_count: z.number().int(),
  error_count: z.number().int(),
  usage: usageTotalsSchema,
  cost_usd: z.number(),
  session_id: z.string().nullable(),
  version: z.string().nullable(),
  tags: z
    .array(z.string())
    .optional()
    .describe("every tag of any of its spans, sorted (absent from older services)"),
  models: z
    .array(z.string())
    .optional()
    .describe("every model of any of its spans, sorted (absent from older services)"),
});

/** `GET /analytics/traces`: a page of traces. */
export const traceListSchema = z.object({
  period_start: z.string(),
  period_end: z.string(),
  traces: z.array(traceSummarySchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("pass as `cursor` for the next page; null on the last"),
});

/** One whole span as `GET /traces/{trace_id}/spans/{span_id}` returns it, with its resource. */
export interface StoredSpan extends ExportedSpan {
  /** The resource (service) that sent the span; absent from services older than 0.1. */
  readonly resource?: SpanResource | undefined;
}

/** A span of a trace, with the spans under it. */
export interface TraceSpan extends StoredSpan {
  /**
   * Without payloads (`getTrace(id, { payloads: false })`): what was left out — `input`,
   * `output`, `expected_output`, `attributes.<key>`, `metadata.<key>`,
   * `events.<index>.attributes.<key>`. `getSpan()` returns the whole span.
   */
  readonly omitted?: string[] | undefined;
  readonly children: TraceSpan[];
}

// Not strict, unlike the export format: a client reads what a newer service adds and ignores it.
const storedSpanShape = {
  ...exportedSpanSchema.shape,
  resource: spanResourceSchema.optional(),
};

/** `GET /traces/{trace_id}/spans/{span_id}`: one span, with every payload. */
export const storedSpanSchema: z.ZodType<StoredSpan> = z
  .object(storedSpanShape)
  .meta({ id: "Span" });

// The id makes the API reference name it once and refer to it where it nests.
const traceSpanSchema: z.ZodType<TraceSpan> = z
  .object({
    ...storedSpanShape,
    omitted: z
      .array(z.string())
      .optional()
      .describe(
        "with payloads=false: what was left out (input, output, expected_output, attributes.<key>, metadata.<key>, events.<index>.attributes.<key>)",
      ),
    get children() {
      return z.array(traceSpanSchema).describe("child spans, same shape");
    },
  })
  .meta({ id: "TraceSpan" });

/** `GET /traces/{trace_id}`: the summary, tags, spans as a tree, and scores. */
export const traceDetailSchema = traceSummarySchema.extend({
  tags: z.array(z.string()),
  payloads: z
    .boolean()
    .optional()
    .describe("false when the spans were asked for without payloads (absent from older services)"),
  spans: z.array(traceSpanSchema).describe("root spans, each with its children nested"),
  scores: z.array(scoreSchema),
});

export type TraceSummary = z.infer<typeof traceSummarySchema>;
export type TraceList = z.infer<typeof traceListSchema>;
export type TraceDetail = z.infer<typeof traceDetailSchema>;
