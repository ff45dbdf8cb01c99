import protobuf from "protobufjs/light.js";
import { CairnError } from "../../../core/errors/index.js";
import { exportTraceServiceRequestName, otlpTraceDescriptor } from "./otlp-proto-descriptor.js";

let requestType: protobuf.Type | undefined;

/**
 * Decodes an OTLP/protobuf `ExportTraceServiceRequest` into the plain-object shape of OTLP/JSON:
 * lowerCamelCase names, 64-bit integers as decimal strings, enums as numbers, absent fields
 * left out. Ids and `bytesValue` stay bytes (`Uint8Array`); the reader turns them into hex and
 * base64.
 */
export function decodeProtobufRequest(body: Uint8Array): unknown {
  requestType ??= protobuf.Root.fromJSON(otlpTraceDescriptor).lookupType(
    exportTraceServiceRequestName,
  );
  try {
    return requestType.toObject(requestType.decode(body), { longs: String });
  } catch (error) {
    // protobufjs reports truncated or mistyped fields; deep nesting overflows the stack.
    const reason = error instanceof Error ? error.message : String(error);
    throw new CairnError(
      "invalid_request",
      `the body is not a valid OTLP protobuf ExportTraceServiceRequest (${reason}); send the bytes the OpenTelemetry OTLP/HTTP protobuf exporter produces, or use content-type application/json for OTLP/JSON`,
      { cause: error },
    );
  }
}
