import { z } from "zod";
import { spanKinds } from "./span-kind.js";

const attributeValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string()),
  z.array(z.number()),
  z.array(z.boolean()),
]);

const spanId = z
  .string()
  .regex(/^(?!0{16})[0-9a-f]{16}$/, "must be 16 lowercase hex digits, not all zero");

/** One span as the Cairn exporter sends it and `memoryExporter().spans()` returns it. */
export const exportedSpanSchema = z.strictObject({
  // All zeros is OpenTelemetry's invalid id, never a real trace or span.
  trace_id: z
    .string()
    .regex(
      /^tr_(?!0{32})[0-9a-f]{32}$/,
      "must be tr_ followed by 32 lowercase hex digits, not all zero",
    ),
  span_id: spanId,
  parent_span_id: spanId.nullable(),
  name: z.string().min(1).max(1024),
  kind: z.enum(spanKinds),
  start_time: z.iso.datetime(),
  end_time: z.iso.datetime(),
  duration_ms: z.number().nonnegative(),
  status: z.enum(["ok", "error"]),
  status_message: z.string().nullable(),
  input: z.string().nullable(),
  output: z.string().nullable(),
  expected_output: z.string().nullable(),
  model: z.string().nullable(),
  session_id: z.string().nullable(),
  tags: z.array(z.string()),
  version: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  usage: z
    .strictObject({
      prompt_tokens: z.number().int().nonnegative(),
      completion_tokens: z.number().int().nonnegative(),
      total_tokens: z.number().int().nonnegative(),
    })
    .nullable(),
  cost_usd: z.number().nonnegative().nullable(),
  attributes: z.record(z.string(), attributeValue),
  events: z.array(
    z.strictObject({
      name: z.string().min(1),
      time: z.iso.datetime(),
      attributes: z.record(z.string(), attributeValue),
    }),
  ),
});

/** The body of `POST {endpoint}/traces`. Documented in docs/export-format.md. */
export const exportBatchSchema = z.strictObject({
  resource: z.strictObject({
    service_name: z.string().min(1),
    sdk_name: z.string().min(1),
    sdk_version: z.string().min(1),
  }),
  spans: z.array(exportedSpanSchema).min(1).max(10_000),
});

export type ExportedSpan = z.infer<typeof exportedSpanSchema>;
export type ExportBatch = z.infer<typeof exportBatchSchema>;
export type ExportedSpanEvent = ExportedSpan["events"][number];
