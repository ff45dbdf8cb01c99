// OTLP/HTTP logs ingest: `POST /v1/logs` bodies as events of the spans they were written in.
export { type DecodedOtlpLogs, decodeOtlpLogsRequest } from "./decode-otlp-logs-request.js";
export type { OtlpLogRecord, SpanLogEvents } from "./log-record.js";
export { logsResponseBody } from "./logs-response.js";
export { maxLogRecordsPerRequest } from "./read-logs-request.js";
export { spanLogEvents } from "./span-log-events.js";
