import type { ExportBatch, ExportedSpan } from "../../../core/wire/index.js";
import type { PriceTable } from "../../../tracing/prices.js";
import {
  attributeLimitBytes,
  capAttributes,
  capSpan,
  payloadLimitBytes,
  spanLimitBytes,
} from "./cap-span.js";
import { type OtlpEncoding, parseOtlpContentType } from "./content-type.js";
import { decodeJsonRequest } from "./decode-json.js";
import { decodeProtobufRequest } from "./decode-protobuf.js";
import { decompressBody } from "./decompress-body.js";
import type { PartialSuccess } from "./export-response.js";
import { mapOtlpSpan } from "./map-span.js";
import type { OtlpResourceRecord, WireAttributes } from "./otlp-records.js";
import { readTraceRequest } from "./read-request.js";

/** The request headers that say how an OTLP body is encoded. */
export interface OtlpBodyHeaders {
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
}

export interface OtlpDecodeOptions {
  /** The most bytes the body may have once decompressed; past it, `payload_too_large`. */
  readonly maxDecodedBytes: number;
  /** Prices for `cost_usd` of model calls that report tokens but no cost. */
  readonly prices: PriceTable;
}

/** The spans of one OTLP request, one batch per OTLP resource (with none for no spans). */
export interface DecodedOtlpTraces {
  readonly encoding: OtlpEncoding;
  readonly batches: readonly ExportBatch[];
  /** Spans across all batches. */
  readonly spanCount: number;
  /** The spans refused for their size, and why; undefined when none was. */
  readonly refused: PartialSuccess | undefined;
}

/**
 * Decodes the body of `POST /v1/traces` (OTLP/HTTP, protobuf or JSON, optionally gzip) into
 * Cairn's export format: one {@link ExportBatch} per OTLP resource, its `resource` taken from
 * `service.name`, `telemetry.sdk.name` and `telemetry.sdk.version` with every resource
 * attribute kept. The GenAI conventions (OpenInference, OTel GenAI, the AI SDK, OpenLLMetry)
 * become kind, model, usage, cost, input, output, session and tags; span kind, scope and links
 * are kept. Values are capped ({@link capSpan}); a span still over {@link spanLimitBytes} is
 * refused and counted in `refused`, and the others are kept.
 *
 * Throws a `CairnError`: `unsupported_media_type` for a content type or encoding other than
 * these, `payload_too_large` past `maxDecodedBytes` or 10,000 spans (`maxSpansPerRequest`),
 * `invalid_request` for a body that is not a valid request, naming what is wrong and where.
 *
 * @example
 * const { batches, refused } = decodeOtlpTraceRequest(
 *   body,
 *   { contentType: request.headers["content-type"], contentEncoding: request.headers["content-encoding"] },
 *   { maxDecodedBytes: 64 * 1024 * 1024, prices: new PriceTable() },
 * );
 */
export function decodeOtlpTraceRequest(
  body: Uint8Array,
  headers: OtlpBodyHeaders,
  options: OtlpDecodeOptions,
): DecodedOtlpTraces {
  const encoding = parseOtlpContentType(headers.contentType);
  const decoded = decompressBody(body, headers.contentEncoding, options.maxDecodedBytes);
  const request = encoding === "json" ? decodeJsonRequest(decoded) : decodeProtobufRequest(decoded);
  const resources = readTraceRequest(request);
  const batches: ExportBatch[] = [];
  const refused: string[] = [];
  let spanCount = 0;
  for (const resource of resources) {
    const serviceName = stringAttribute(resource.attributes, "service.name");
    const context = { serviceName, prices: options.prices };
    const spans: ExportedSpan[] = [];
    for (const record of resource.spans) {
      const { span, bytes } = capSpan(mapOtlpSpan(record, context));
      if (bytes <= spanLimitBytes) spans.push(span);
      else refused.push(`span ${span.span_id} of trace ${span.trace_id} (${mebibytes(bytes)})`);
    }
    if (spans.length === 0) continue;
    batches.push({ resource: resourceOf(resource, serviceName), spans });
    spanCount += spans.length;
  }
  return { encoding, batches, spanCount, refused: refusedSpans(refused) };
}

function refusedSpans(refused: readonly string[]): PartialSuccess | undefined {
  if (refused.length === 0) return undefined;
  const listed = refused.slice(0, 5).join(", ");
  const more = refused.length > 5 ? ` and ${refused.length - 5} more` : "";
  return {
    rejected: refused.length,
    errorMessage: `${refused.length} span${refused.length === 1 ? " was" : "s were"} refused for holding more than ${mebibytes(spanLimitBytes)} once each attribute was capped at ${attributeLimitBytes / 1024} KiB and input and output at ${mebibytes(payloadLimitBytes)}: ${listed}${more}; the other spans were stored`,
  };
}

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
}

// The OpenTelemetry specification's fallbacks for a resource that does not say.
function resourceOf(
  resource: OtlpResourceRecord,
  serviceName: string | undefined,
): ExportBatch["resource"] {
  return {
    service_name: serviceName ?? "unknown_service",
    sdk_name: stringAttribute(resource.attributes, "telemetry.sdk.name") ?? "unknown",
    sdk_version: stringAttribute(resource.attributes, "telemetry.sdk.version") ?? "unknown",
    attributes: capAttributes(resource.attributes),
  };
}

function stringAttribute(values: WireAttributes, key: string): string | undefined {
  const value = Object.hasOwn(values, key) ? values[key] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}
