import type { OtlpEncoding } from "./content-type.js";
import { otlpMessageType } from "./decode-protobuf.js";

/** What a request could not store: how many items, and why. */
export interface PartialSuccess {
  readonly rejected: number;
  readonly errorMessage: string;
}

/**
 * An OTLP export response (`ExportTraceServiceResponse`, `ExportLogsServiceResponse`) in the
 * encoding of the request: empty on full success, else `partialSuccess` with the count under
 * `rejectedField` (`rejectedSpans`, `rejectedLogRecords`) and the error message. OTLP/JSON
 * writes the int64 count as a decimal string.
 */
export function exportResponseBody(
  encoding: OtlpEncoding,
  messageName: string,
  rejectedField: "rejectedSpans" | "rejectedLogRecords",
  partial: PartialSuccess | undefined,
): Uint8Array<ArrayBuffer> | object {
  const response =
    partial === undefined || partial.rejected === 0
      ? {}
      : {
          partialSuccess: {
            [rejectedField]: String(partial.rejected),
            errorMessage: partial.errorMessage,
          },
        };
  if (encoding === "json") return response;
  const type = otlpMessageType(messageName);
  return new Uint8Array(type.encode(type.fromObject(response)).finish());
}
