// The public tracing API of `cairn`. Every export is listed by name.
export { ApiRequestError } from "./core/errors/api-request-error.js";
export { CairnError } from "./core/errors/cairn-error.js";
export { ConfigurationError } from "./core/errors/configuration-error.js";
export { ExportError } from "./core/errors/export-error.js";
export { parseTraceId, toCairnTraceId } from "./core/ids.js";
export type {
  AnalyticsGroupBy,
  CostReport,
  DayCost,
  GroupKey,
  LatencyFigures,
  MetricsReport,
  PerformanceReport,
  SpanMetrics,
} from "./core/wire/analytics.js";
export type { ExportBatch, ExportedSpan, ExportedSpanEvent } from "./core/wire/export-batch.js";
export { type SpanKind, spanKinds } from "./core/wire/span-kind.js";
export type { TokenUsage } from "./core/wire/token-usage.js";
export type { Version, VersionEvent } from "./core/wire/versions.js";
export {
  type AnalyticsDate,
  type AnalyticsOptions,
  getCosts,
  getMetrics,
  getPerformance,
} from "./tracing/client/analytics.js";
export {
  currentVersion,
  listVersions,
  type PublishVersionOptions,
  publishVersion,
  rollback,
  versionHistory,
} from "./tracing/client/versions.js";
export { currentSpan } from "./tracing/current-span.js";
export type { ExportStats } from "./tracing/export/batch-processor.js";
export { formatTraceTree } from "./tracing/export/format-tree.js";
export { observe } from "./tracing/observe.js";
export type { CairnSpan, TokenUsageInput } from "./tracing/observed-span.js";
export type { ObserveOptions } from "./tracing/options.js";
export { defaultPrices, type ModelPrice } from "./tracing/prices.js";
export {
  type CairnConfig,
  configure,
  exportStats,
  flush,
  shutdown,
} from "./tracing/runtime/configure.js";
export { agentSession, Session, type SessionOptions, withSession } from "./tracing/session.js";
