import type { OtlpEncoding } from "../content-type.js";
import { exportResponseBody } from "../export-response.js";
import { exportLogsServiceResponseName } from "../otlp-proto-descriptor.js";

/** Why records without a trace and span id are refused, for `partialSuccess.errorMessage`. */
export function rejectedMessage(rejected: number): string {
  return `${rejected} log record${rejected === 1 ? " has" : "s have"} no trace id and span id; Cairn keeps log records only as events of the span they were written in, so emit them inside an active span`;
}

/**
 * The `ExportLogsServiceResponse` in the encoding of the request: empty on full success,
 * with `partialSuccess` (`rejectedLogRecords`, `errorMessage`) when records were refused.
 */
export function logsResponseBody(
  encoding: OtlpEncoding,
  rejected: number,
): Uint8Array<ArrayBuffer> | object {
  return exportResponseBody(encoding, exportLogsServiceResponseName, "rejectedLogRecords", {
    rejected,
    errorMessage: rejectedMessage(rejected),
  });
}
