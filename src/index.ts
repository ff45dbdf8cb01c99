// The public tracing API of `cairn-ai`. Every export is listed by name.
export { ApiRequestError } from "./core/errors/api-request-error.js";
export { CairnError } from "./core/errors/cairn-error.js";
export { ConfigurationError } from "./core/errors/configuration-error.js";
export { ExportError } from "./core/errors/export-error.js";
export { JudgeError } from "./core/errors/judge-error.js";
export { parseTraceId, toCairnTraceId } from "./core/ids.js";
export {
  consoleLogger,
  type Logger,
  type LogLevel,
  setLogger,
} from "./core/logger.js";
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
export type {
  CaseChange,
  CaseScore,
  Dataset,
  TestCase,
  TestResult,
  TestRun,
  TestRunComparison,
  TestRunDetail,
  TestRunSummary,
} from "./core/wire/evals.js";
export type { ExportBatch, ExportedSpan, ExportedSpanEvent } from "./core/wire/export-batch.js";
export type { JudgeVerdict, Score } from "./core/wire/scores.js";
export type {
  SessionDetail,
  SessionEvent,
  SessionList,
  SessionSummary,
  SessionTrace,
} from "./core/wire/sessions.js";
export { type SpanKind, spanKinds } from "./core/wire/span-kind.js";
export type { TokenUsage } from "./core/wire/token-usage.js";
export type {
  StoredSpan,
  TraceDetail,
  TraceList,
  TraceSpan,
  TraceSummary,
} from "./core/wire/traces.js";
export type { Version, VersionEvent } from "./core/wire/versions.js";
export {
  type AnalyticsDate,
  type AnalyticsOptions,
  getCosts,
  getMetrics,
  getPerformance,
} from "./tracing/client/analytics.js";
export {
  compareTestRuns,
  createTestCases,
  getTestRun,
  listDatasets,
  listTestCases,
  listTestRuns,
  recordTestRun,
  type TestCaseInput,
} from "./tracing/client/evals.js";
export type { ClientOptions } from "./tracing/client/request.js";
export {
  addScore,
  type GivenScore,
  getScores,
  type JudgeOnServiceOptions,
  judgeOnService,
  scoreTrace,
} from "./tracing/client/scores.js";
export {
  type GetSessionOptions,
  getSession,
  type ListSessionsOptions,
  listSessions,
} from "./tracing/client/sessions.js";
export {
  type GetTraceOptions,
  getSpan,
  getTrace,
  type ListTracesOptions,
  listTraces,
} from "./tracing/client/traces.js";
export {
  currentVersion,
  listVersions,
  type PublishVersionOptions,
  publishVersion,
  rollback,
  versionHistory,
} from "./tracing/client/versions.js";
export { currentSpan } from "./tracing/current-span.js";
export { formatTestReport } from "./tracing/evals/format-report.js";
export {
  type RunTestsOptions,
  runTests,
  type TestCaseRun,
  type TestReport,
  type TestScorer,
} from "./tracing/evals/run-tests.js";
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
export { Judge, type JudgeConfig, type TraceJudgeCall } from "./tracing/scoring/judge.js";
export { registerScorer, scorerSlugs, unregisterScorer } from "./tracing/scoring/registry.js";
export { score } from "./tracing/scoring/score.js";
export type {
  JudgeGrader,
  JudgeRequest,
  ScoreResult,
  Scorer,
  ScorerContext,
  ScorerInput,
} from "./tracing/scoring/types.js";
export { agentSession, Session, type SessionOptions, withSession } from "./tracing/session.js";
