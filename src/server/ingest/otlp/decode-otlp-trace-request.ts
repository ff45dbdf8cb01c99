import type { ExportBatch } from "../../../core/wire/index.js";
import type { PriceTable } from "../../../tracing/prices.js";
import { parseOtlpContentType } from "./content-type.js";
import { decodeJsonRequest } from "./decode-json.js";
import { decodeProtobufRequest } from "./decode-protobuf.js";
import { decompressBody } from "./decompress-body.js";
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
  readonly batches: readonly ExportBatch[];
  /** Spans across all batches. */
  readonly spanCount: number;
}

/**
 * Decodes the body of `POST /v1/traces` (OTLP/HTTP, protobuf or JSON, optionally gzip) into
 * Cairn's export format: one {@link ExportBatch} per OTLP resource, its `resource` taken from
 * `service.name`, `telemetry.sdk.name` and `telemetry.sdk.version`. OpenInference and GenAI
 * attributes become kind, model, usage, cost, session and tags; other spans are `chain`
 * with their attributes kept.
 *
 * Throws a `CairnError`: `unsupported_media_type` for a content type or encoding other than
 * these, `payload_too_large` past `maxDecodedBytes` or 10,000 spans (`maxSpansPerRequest`),
 * `invalid_request` for a body that is not a valid request, naming what is wrong and where.
 *
 * @example
 * const { batches } = decodeOtlpTraceRequest(
 *   body,
 *   { contentType: request.headers["content-type"], contentEncoding: request.headers["content-encoding"] },
 *   { maxDecodedBytes: 16 * 1024 * 1024, prices: new PriceTable() },
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
  let spanCount = 0;
  for (const resource of resources) {
    if (resource.spans.length === 0) continue;
    const serviceName = stringAttribute(resource.attributes, "service.name");
    const context = { serviceName, prices: options.prices };
    batches.push({
      resource: resourceOf(resource, serviceName),
      spans: resource.spans.map((span) => mapOtlpSpan(span, context)),
    });
    spanCount += resource.spans.length;
  }
  return { batches, spanCount };
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
  };
}

function stringAttribute(values: WireAttributes, key: string): string | undefined {
  const value = Object.hasOwn(values, key) ? values[key] : undefined;
  return typeof value === "string" && value !== "" ? value : undefined;
}
