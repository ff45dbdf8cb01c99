import { type OtlpEncoding, parseOtlpContentType } from "../content-type.js";
import { decodeJsonRequest } from "../decode-json.js";
import type { OtlpBodyHeaders } from "../decode-otlp-trace-request.js";
import { decodeProtobufRequest } from "../decode-protobuf.js";
import { decompressBody } from "../decompress-body.js";
import { exportLogsServiceRequestName } from "../otlp-proto-descriptor.js";
import type { OtlpLogsRequest } from "./log-record.js";
import { readLogsRequest } from "./read-logs-request.js";

/** The log records of one request, and the encoding its response is sent in. */
export interface DecodedOtlpLogs extends OtlpLogsRequest {
  readonly encoding: OtlpEncoding;
}

/**
 * Decodes the body of `POST /v1/logs` (OTLP/HTTP `ExportLogsServiceRequest`, protobuf or JSON,
 * optionally gzip) into its log records. Records without a trace and span id are counted as
 * rejected, not read.
 *
 * Throws a `CairnError`: `unsupported_media_type` for a content type or encoding other than
 * these, `payload_too_large` past `maxDecodedBytes` or 10,000 records
 * (`maxLogRecordsPerRequest`), `invalid_request` for a body that is not a valid request,
 * naming what is wrong and where.
 *
 * @example
 * const { records, rejected } = decodeOtlpLogsRequest(
 *   body,
 *   { contentType: request.headers["content-type"], contentEncoding: request.headers["content-encoding"] },
 *   { maxDecodedBytes: 16 * 1024 * 1024 },
 * );
 */
export function decodeOtlpLogsRequest(
  body: Uint8Array,
  headers: OtlpBodyHeaders,
  options: { readonly maxDecodedBytes: number },
): DecodedOtlpLogs {
  const encoding = parseOtlpContentType(headers.contentType, "logs");
  const decoded = decompressBody(body, headers.contentEncoding, options.maxDecodedBytes);
  const request = readLogsRequest(
    encoding === "json"
      ? decodeJsonRequest(decoded)
      : decodeProtobufRequest(decoded, exportLogsServiceRequestName),
  );
  return { ...request, encoding };
}
