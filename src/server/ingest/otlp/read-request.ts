import { CairnError } from "../../../core/errors/index.js";
import { type OtelSpanKind, spanTimeRange } from "../../../core/wire/index.js";
import type {
  OtlpEventRecord,
  OtlpLinkRecord,
  OtlpResourceRecord,
  OtlpScopeRecord,
  OtlpSpanRecord,
} from "./otlp-records.js";
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
    const scopeMessage = readMessage(scope, scopeWhere);
    const library = readScope(scopeMessage.scope, `${scopeWhere}: scope`);
    const list = readList(scopeMessage.spans, `${scopeWhere}: spans`);
    for (const [spanIndex, span] of list.entries()) {
      spans.push(readSpan(span, `span ${spanIndex} of ${scopeWhere}`, library));
    }
  }
  return { attributes: readAttributes(resource.attributes, `${where}: attributes`), spans };
}

function readScope(value: unknown, where: string): OtlpScopeRecord | null {
  const scope = readMessage(value, where);
  const name = readString(scope.name, `${where}.name`);
  if (name === "") return null;
  const version = readString(scope.version, `${where}.version`);
  return { name, version: version === "" ? null : version };
}

function readSpan(value: unknown, where: string, scope: OtlpScopeRecord | null): OtlpSpanRecord {
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
    spanKind: readSpanKind(span.kind, `${where}: kind`),
    scope,
    links: readList(span.links, `${where}: links`).map((link, index) =>
      readLink(link, `${where}: links[${index}]`),
    ),
  };
}

// SpanKind: 0 unspecified, then internal, server, client, producer, consumer.
const spanKindNames: readonly (OtelSpanKind | undefined)[] = [
  undefined,
  "internal",
  "server",
  "client",
  "producer",
  "consumer",
];

/** `Span.kind`: OTLP/JSON writes enums as integers; the names (`SPAN_KIND_SERVER`) are read too. */
function readSpanKind(value: unknown, where: string): OtelSpanKind | undefined {
  if (value === undefined || value === null) return undefined;
  const index =
    typeof value === "string"
      ? spanKindNames.findIndex(
          (name, at) => at > 0 && value === `SPAN_KIND_${name?.toUpperCase()}`,
        )
      : value;
  if (value === "SPAN_KIND_UNSPECIFIED") return undefined;
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index > 5) {
    throw invalid(
      `${where} must be a span kind (0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer), but is ${JSON.stringify(value)}`,
    );
  }
  return spanKindNames[index];
}

function readLink(value: unknown, where: string): OtlpLinkRecord {
  const link = readMessage(value, where);
  return {
    traceId: requiredId(readId(link.traceId, 16, "trace id", where), "trace id", where),
    spanId: requiredId(readId(link.spanId, 8, "span id", where), "span id", where),
    attributes: readAttributes(link.attributes, `${where}: attributes`),
  };
}

function readEvent(value: unknown, where: string, spanStart: bigint): OtlpEventRecord {
  const event = readMessage(value, where);
  const time = readUnixNano(event.timeUnixNano, `${where}: timeUnixNano`);
  return {
    name: readString(event.name, `${where}: name`),
    // An event without a time is placed at the start of its span.
    timeUnixNano: time === 0n ? spanStart : storableTime(time, `${where}: timeUnixNano`),
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
  return storableTime(nanos, `${where}: ${field}`);
}

/** The latest time a span may have, in Unix nanoseconds (spanTimeRange). */
const latestNanos = BigInt(Date.parse(spanTimeRange.latest)) * 1_000_000n;

/** A time no later than a span may be (Unix time is never before spanTimeRange's earliest). */
function storableTime(nanos: bigint, where: string): bigint {
  if (nanos >= latestNanos) {
    throw invalid(
      `${where} is ${nanos} ns, on or after ${spanTimeRange.latest}: a span's times must be before it (a clock in nanoseconds read as another unit?)`,
    );
  }
  return nanos;
}

function isZero(hex: string): boolean {
  return /^0+$/.test(hex);
}
