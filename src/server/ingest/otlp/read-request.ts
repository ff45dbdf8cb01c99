import { CairnError } from "../../../core/errors/index.js";
import type { OtlpEventRecord, OtlpResourceRecord, OtlpSpanRecord } from "./otlp-records.js";
import { readAttributes } from "./read-attributes.js";
import {
  invalid,
  readId,
  readList,
  readMessage,
  readStatusCode,
  readString,
  readUnixNano,
} from "./read-fields.js";

/** The most spans one OTLP request may carry, as for Cairn's own `POST /traces`. */
export const maxSpansPerRequest = 10_000;

/**
 * Checks a decoded `ExportTraceServiceRequest` (the plain-object shape both encodings decode
 * to) and reads its spans, one record per `ResourceSpans`. Errors name the resource, scope
 * and span by index, and what is wrong.
 */
export function readTraceRequest(decoded: unknown): OtlpResourceRecord[] {
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) {
    throw invalid("the body must be an OTLP ExportTraceServiceRequest object with resourceSpans");
  }
  const resources = readList(readMessage(decoded, "the body").resourceSpans, "resourceSpans");
  const count = countSpans(resources);
  if (count > maxSpansPerRequest) {
    throw new CairnError(
      "payload_too_large",
      `the request has ${count} spans, more than the ${maxSpansPerRequest} allowed in one request; export smaller batches (for example with OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
    );
  }
  return resources.map(readResource);
}

// Counted before anything is read, so an oversized request costs no per-span work.
function countSpans(resources: readonly unknown[]): number {
  let count = 0;
  for (const resource of resources) {
    for (const scope of arrayAt(resource, "scopeSpans")) count += arrayAt(scope, "spans").length;
  }
  return count;
}

function arrayAt(value: unknown, key: string): readonly unknown[] {
  const item =
    typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)[key]
      : undefined;
  return Array.isArray(item) ? item : [];
}

function readResource(value: unknown, resourceIndex: number): OtlpResourceRecord {
  const where = `resource ${resourceIndex}`;
  const message = readMessage(value, where);
  const resource = readMessage(message.resource, `${where}: resource`);
  const spans: OtlpSpanRecord[] = [];
  for (const [scopeIndex, scope] of readList(
    message.scopeSpans,
    `${where}: scopeSpans`,
  ).entries()) {
    const scopeWhere = `scope ${scopeIndex} of ${where}`;
    const list = readList(readMessage(scope, scopeWhere).spans, `${scopeWhere}: spans`);
    for (const [spanIndex, span] of list.entries()) {
      spans.push(readSpan(span, `span ${spanIndex} of ${scopeWhere}`));
    }
  }
  return { attributes: readAttributes(resource.attributes, `${where}: attributes`), spans };
}

function readSpan(value: unknown, where: string): OtlpSpanRecord {
  const span = readMessage(value, where);
  const traceId = requiredId(readId(span.traceId, 16, "trace id", where), "trace id", where);
  const spanId = requiredId(readId(span.spanId, 8, "span id", where), "span id", where);
  const parentSpanId = readId(span.parentSpanId, 8, "parent span id", where);
  const startTimeUnixNano = requiredTime(span.startTimeUnixNano, "startTimeUnixNano", where);
  const endTimeUnixNano = requiredTime(span.endTimeUnixNano, "endTimeUnixNano", where);
  const status = readMessage(span.status, `${where}: status`);
  const events = readList(span.events, `${where}: events`).map((event, index) =>
    readEvent(event, `${where}: events[${index}]`, startTimeUnixNano),
  );
  return {
    traceId,
    spanId,
    // An all-zero parent is no parent: some SDKs send it for root spans.
    parentSpanId: parentSpanId === null || isZero(parentSpanId) ? null : parentSpanId,
    name: readString(span.name, `${where}: name`),
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: readAttributes(span.attributes, `${where}: attributes`),
    events,
    statusCode: readStatusCode(status.code, `${where}: status.code`),
    statusMessage: readString(status.message, `${where}: status.message`),
  };
}

function readEvent(value: unknown, where: string, spanStart: bigint): OtlpEventRecord {
  const event = readMessage(value, where);
  const time = readUnixNano(event.timeUnixNano, `${where}: timeUnixNano`);
  return {
    name: readString(event.name, `${where}: name`),
    // An event without a time is placed at the start of its span.
    timeUnixNano: time === 0n ? spanStart : time,
    attributes: readAttributes(event.attributes, `${where}: attributes`),
  };
}

function requiredId(id: string | null, label: string, where: string): string {
  if (id === null) throw invalid(`${where} has no ${label}`);
  if (isZero(id)) throw invalid(`${where} has an all-zero ${label}, which OTLP defines as invalid`);
  return id;
}

function requiredTime(value: unknown, field: string, where: string): bigint {
  const nanos = readUnixNano(value, `${where}: ${field}`);
  if (nanos === 0n) throw invalid(`${where} has no ${field}`);
  return nanos;
}

function isZero(hex: string): boolean {
  return /^0+$/.test(hex);
}
