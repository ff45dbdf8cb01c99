import protobuf from "protobufjs/light.js";
import { CairnError } from "../../../core/errors/index.js";
import { exportTraceServiceRequestName, otlpTraceDescriptor } from "./otlp-proto-descriptor.js";

let root: protobuf.Root | undefined;
const types = new Map<string, protobuf.Type>();

/** A message type of the OTLP descriptor, by its full name. */
export function otlpMessageType(fullName: string): protobuf.Type {
  let type = types.get(fullName);
  if (type === undefined) {
    root ??= protobuf.Root.fromJSON(otlpTraceDescriptor);
    type = root.lookupType(fullName);
    types.set(fullName, type);
  }
  return type;
}

/**
 * Decodes an OTLP/protobuf request (an `ExportTraceServiceRequest` unless `messageName` names
 * another message of the descriptor) into the plain-object shape of OTLP/JSON: lowerCamelCase
 * names, 64-bit integers as decimal strings, enums as numbers, absent fields left out. Ids and
 * `bytesValue` stay bytes (`Uint8Array`); the reader turns them into hex and base64.
 */
export function decodeProtobufRequest(
  body: Uint8Array,
  messageName: string = exportTraceServiceRequestName,
): unknown {
  const requestType = otlpMessageType(messageName);
  try {
    return requestType.toObject(requestType.decode(body), { longs: String });
  } catch (error) {
    // protobufjs reports truncated or mistyped fields; deep nesting overflows the stack.
    const reason = error instanceof Error ? error.message : String(error);
    const signal = requestType.name === "ExportTraceServiceRequest" ? "trace" : "logs";
    throw new CairnError(
      "invalid_request",
      `the body is not a valid OTLP protobuf ${requestType.name} (${reason}); send the bytes the OpenTelemetry OTLP/HTTP protobuf ${signal} exporter produces, or use content-type application/json for OTLP/JSON`,
      { cause: error },
    );
  }
}
