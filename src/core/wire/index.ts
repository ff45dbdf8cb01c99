export {
  type ExportBatch,
  type ExportedSpan,
  type ExportedSpanEvent,
  exportBatchSchema,
  exportedSpanSchema,
  maxSessionIdLength,
  maxSpanCostUsd,
  type OtelSpanKind,
  otelSpanKinds,
  type SpanResource,
  spanResourceSchema,
  spanTimeRange,
} from "./export-batch.js";
export { parseSpanKind, type SpanKind, spanKindSchema, spanKinds } from "./span-kind.js";
export { type TokenUsage, tokenUsageSchema } from "./token-usage.js";
