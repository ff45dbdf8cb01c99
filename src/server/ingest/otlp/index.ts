// OTLP/HTTP trace ingest: decoding `POST /v1/traces` bodies into Cairn's export format.
export { type OtlpEncoding, parseOtlpContentType } from "./content-type.js";
export {
  type DecodedOtlpTraces,
  decodeOtlpTraceRequest,
  type OtlpBodyHeaders,
  type OtlpDecodeOptions,
} from "./decode-otlp-trace-request.js";
export { maxSpansPerRequest } from "./read-request.js";
