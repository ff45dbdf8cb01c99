import { z } from "zod";
import { exportedSpanSchema, spanKinds } from "../../core/wire/index.js";
import { scoreSchema } from "../../core/wire/scores.js";
import { errorStatuses } from "../http/api-error.js";

const codes = Object.keys(errorStatuses) as [
  keyof typeof errorStatuses,
  ...Array<keyof typeof errorStatuses>,
];

export const errorBodySchema = z.object({
  error: z.enum(codes).describe("a stable snake_case code"),
  message: z.string().describe("what happened and what to do, as a sentence"),
  sandbox_id: z.string().optional().describe("sandbox errors: the sandbox concerned"),
  reason: z
    .enum(["stopped", "expired", "failed", "runner_unavailable"])
    .optional()
    .describe("sandbox_unavailable: why the sandbox cannot take work"),
  detail: z
    .string()
    .optional()
    .describe("sandbox_unavailable with runner_unavailable: what the runner says of it"),
});

export const ingestResultSchema = z.object({
  accepted: z.number().int().describe("spans stored by this request"),
  duplicates: z.number().int().describe("spans already stored (a retried batch), skipped"),
});

const usageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

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
  usage: usageSchema,
  cost_usd: z.number(),
  session_id: z.string().nullable(),
  version: z.string().nullable(),
});

export const traceListSchema = z.object({
  period_start: z.string(),
  period_end: z.string(),
  traces: z.array(traceSummarySchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("pass as `cursor` for the next page; null on the last"),
});

export const traceDetailSchema = traceSummarySchema.extend({
  tags: z.array(z.string()),
  spans: z
    .array(
      exportedSpanSchema.extend({
        children: z.array(z.record(z.string(), z.unknown())).describe("child spans, same shape"),
      }),
    )
    .describe("root spans, each with its children nested"),
  scores: z.array(scoreSchema),
});

export { rollbackResultSchema, versionListSchema } from "../../core/wire/versions.js";
