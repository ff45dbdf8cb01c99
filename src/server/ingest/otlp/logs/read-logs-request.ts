import { CairnError } from "../../../../core/errors/index.js";
import { readAttributes, readValue } from "../read-attributes.js";
import {
  invalid,
  readId,
  readList,
  readMessage,
  readString,
  readUnixNano,
} from "../read-fields.js";
import type { OtlpLogRecord, OtlpLogsRequest } from "./log-record.js";

/** The most log records one OTLP request may carry, as many as spans in a trace request. */
export const maxLogRecordsPerRequest = 10_000;

const severityNames = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].flatMap((name) =>
  ["", "2", "3", "4"].map((suffix) => `SEVERITY_NUMBER_${name}${suffix}`),
);

/**
 * Checks a decoded `ExportLogsServiceRequest` (the plain-object shape both encodings decode
 * to) and reads its log records. A record without a trace id or span id is counted as
 * rejected rather than read: Cairn keeps log records on the span they belong to. Errors name
 * the resource, scope and record by index, and what is wrong.
 */
export function readLogsRequest(decoded: unknown): OtlpLogsRequest {
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) {
    throw invalid("the body must be an OTLP ExportLogsServiceRequest object with resourceLogs");
  }
  const scopes = scopeRecordLists(readMessage(decoded, "the body").resourceLogs);
  const count = scopes.reduce((sum, scope) => sum + scope.records.length, 0);
  if (count > maxLogRecordsPerRequest) {
    throw new CairnError(
      "payload_too_large",
      `the request has ${count} log records, more than the ${maxLogRecordsPerRequest} allowed in one request; export smaller batches (for example with OTEL_BLRP_MAX_EXPORT_BATCH_SIZE)`,
    );
  }
  const records: OtlpLogRecord[] = [];
  let rejected = 0;
  for (const scope of scopes) {
    for (const [index, value] of scope.records.entries()) {
      const record = readLogRecord(value, `log record ${index} of ${scope.where}`);
      if (record === undefined) rejected++;
      else records.push(record);
    }
  }
  return { records, rejected };
}

// The record lists of every scope, checked as lists before any record is read, so an
// oversized request costs no per-record work.
function scopeRecordLists(value: unknown): Array<{ where: string; records: readonly unknown[] }> {
  const lists: Array<{ where: string; records: readonly unknown[] }> = [];
  for (const [resourceIndex, resource] of readList(value, "resourceLogs").entries()) {
    const resourceWhere = `resource ${resourceIndex}`;
    const scopeLogs = readMessage(resource, resourceWhere).scopeLogs;
    for (const [scopeIndex, scope] of readList(
      scopeLogs,
      `${resourceWhere}: scopeLogs`,
    ).entries()) {
      const where = `scope ${scopeIndex} of ${resourceWhere}`;
      lists.push({
        where,
        records: readList(readMessage(scope, where).logRecords, `${where}: logRecords`),
      });
    }
  }
  return lists;
}

function readLogRecord(value: unknown, where: string): OtlpLogRecord | undefined {
  const record = readMessage(value, where);
  const traceId = readId(record.traceId, 16, "trace id", where);
  const spanId = readId(record.spanId, 8, "span id", where);
  const time = readUnixNano(record.timeUnixNano, `${where}: timeUnixNano`);
  const observed = readUnixNano(record.observedTimeUnixNano, `${where}: observedTimeUnixNano`);
  const read: Omit<OtlpLogRecord, "traceId" | "spanId"> = {
    timeUnixNano: time === 0n ? observed : time,
    severityNumber: readSeverity(record.severityNumber, `${where}: severityNumber`),
    severityText: readString(record.severityText, `${where}: severityText`),
    eventName: readString(record.eventName, `${where}: eventName`),
    body: readValue(record.body, `${where}: body`),
    attributes: readAttributes(record.attributes, `${where}: attributes`),
  };
  // All zeros is OpenTelemetry's invalid id: a log written outside any span.
  if (traceId === null || spanId === null || isZero(traceId) || isZero(spanId)) return undefined;
  return { traceId, spanId, ...read };
}

// OTLP/JSON writes enums as integers; the names are accepted too.
function readSeverity(value: unknown, where: string): number {
  if (value === undefined || value === null) return 0;
  if (value === "SEVERITY_NUMBER_UNSPECIFIED") return 0;
  // An unknown name reads as -1, which the check below refuses.
  const number = typeof value === "string" ? severityNames.indexOf(value) + 1 || -1 : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > 24) {
    throw invalid(
      `${where} must be a severity number from 0 (unspecified) to 24 (FATAL4), but is ${JSON.stringify(value)}`,
    );
  }
  return number;
}

function isZero(hex: string): boolean {
  return /^0+$/.test(hex);
}

/** The short name of a severity number (`INFO` for 9 to 12), or undefined for 0. */
export function severityName(severityNumber: number): string | undefined {
  const name = severityNames[severityNumber - 1];
  return name?.replace("SEVERITY_NUMBER_", "").replace(/\d$/, "");
}
