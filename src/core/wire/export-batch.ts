import { z } from "zod";
import { maxMetadataDepth, nestsDeeperThan } from "./metadata.js";
import { spanKinds } from "./span-kind.js";

/** OpenTelemetry's span kinds, lower-cased. */
export const otelSpanKinds = ["internal", "server", "client", "producer", "consumer"] as const;
export type OtelSpanKind = (typeof otelSpanKinds)[number];

// Arrays keep their positions: OpenTelemetry allows null items in a homogeneous array.
const attributeValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string().nullable()),
  z.array(z.number().nullable()),
  z.array(z.boolean().nullable()),
]);

const attributeMap = z.record(z.string(), attributeValue);

const spanId = z
  .string()
  .regex(/^(?!0{16})[0-9a-f]{16}$/, "must be 16 lowercase hex digits, not all zero");

/**
 * The times a span and its events may have. Stores keep them as microseconds, exact in a
 * JavaScript number only to about the year 2255; what is outside this range is a wrong clock,
 * refused at ingest rather than stored and unreadable.
 */
export const spanTimeRange = {
  earliest: "1900-01-01T00:00:00.000Z",
  latest: "2200-01-01T00:00:00.000Z",
} as const;

/**
 * The most one span may cost, in USD: far above any call's, and low enough that the sums of a
 * trace, a session or a period stay finite numbers.
 */
export const maxSpanCostUsd = 1_000_000_000;

/**
 * The longest session id, as `agentSession({ id })` takes it: `GET /sessions/{session_id}` and
 * the session list's cursors carry it in a URL.
 */
export const maxSessionIdLength = 256;

const spanTime = z.iso.datetime().refine((text) => {
  const ms = Date.parse(text);
  return ms >= Date.parse(spanTimeRange.earliest) && ms < Date.parse(spanTimeRange.latest);
}, `must be from ${spanTimeRange.earliest} to before ${spanTimeRange.latest}`);

/** One span as the Cairn exporter sends it and `memoryExporter().spans()` returns it. */
export const exportedSpanSchema = z
  .strictObject({
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
    start_time: spanTime,
    end_time: spanTime,
    duration_ms: z.number().nonnegative(),
    status: z.enum(["ok", "error"]),
    status_message: z.string().nullable(),
    input: z.string().nullable(),
    output: z.string().nullable(),
    expected_output: z.string().nullable(),
    model: z.string().nullable(),
    session_id: z
      .string()
      .max(maxSessionIdLength, `must be at most ${maxSessionIdLength} characters`)
      .nullable(),
    tags: z.array(z.string()),
    version: z.string().nullable(),
    metadata: z
      .record(z.string(), z.unknown())
      .refine(
        (metadata) => !nestsDeeperThan(metadata, maxMetadataDepth),
        `must not nest objects and arrays more than ${maxMetadataDepth} levels deep`,
      ),
    usage: z
      .strictObject({
        prompt_tokens: z.number().int().nonnegative(),
        completion_tokens: z.number().int().nonnegative(),
        total_tokens: z.number().int().nonnegative(),
        /** Prompt tokens read from the provider's cache: part of `prompt_tokens`. */
        cached_tokens: z.number().int().nonnegative().optional(),
        /** Reasoning tokens: part of `completion_tokens`. */
        reasoning_tokens: z.number().int().nonnegative().optional(),
      })
      .nullable(),
    cost_usd: z.number().nonnegative().max(maxSpanCostUsd).nullable(),
    attributes: attributeMap,
    events: z.array(
      z.strictObject({
        name: z.string().min(1),
        time: spanTime,
        attributes: attributeMap,
      }),
    ),
    /** OpenTelemetry's span kind; absent for spans that did not say (Cairn's SDK: internal). */
    span_kind: z.enum(otelSpanKinds).optional(),
    /** The instrumentation scope (library) that made the span. */
    scope: z
      .strictObject({ name: z.string(), version: z.string().nullable() })
      .nullable()
      .optional(),
    /** Links to other spans, as OpenTelemetry records them. */
    links: z
      .array(
        z.strictObject({
          trace_id: z.string().regex(/^tr_[0-9a-f]{32}$/),
          span_id: z.string().regex(/^[0-9a-f]{16}$/),
          attributes: attributeMap,
        }),
      )
      .optional(),
  })
  // Stores keep a span's end as its start plus its duration: it too must be in spanTimeRange.
  .refine(
    (span) => !(Date.parse(span.start_time) + span.duration_ms >= Date.parse(spanTimeRange.latest)),
    {
      path: ["duration_ms"],
      message: `must end the span before ${spanTimeRange.latest} (start_time + duration_ms)`,
    },
  );

/** The batch's resource attributes beyond the three named fields (OTLP keeps them all). */
const resourceAttributes = attributeMap.optional();

/** The resource a stored span came from, as the trace API returns it with the span. */
export const spanResourceSchema = z.object({
  service_name: z.string().describe("the resource's service.name"),
  attributes: attributeMap.describe("every resource attribute, as sent over OTLP"),
});
export type SpanResource = z.infer<typeof spanResourceSchema>;

/** The body of `POST {endpoint}/traces`. Documented in docs/export-format.md. */
export const exportBatchSchema = z.strictObject({
  resource: z.strictObject({
    service_name: z.string().min(1),
    sdk_name: z.string().min(1),
    sdk_version: z.string().min(1),
    attributes: resourceAttributes,
  }),
  spans: z.array(exportedSpanSchema).min(1).max(10_000),
});

export type ExportedSpan = z.infer<typeof exportedSpanSchema>;
export type ExportBatch = z.infer<typeof exportBatchSchema>;
export type ExportedSpanEvent = ExportedSpan["events"][number];
