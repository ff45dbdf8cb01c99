import { CairnError } from "../../../core/errors/index.js";

// Readers of single OTLP fields. Both encodings leave a field out when it holds its default,
// and OTLP/JSON may also write null, so absent values read as the default.

/** A `CairnError` with code `invalid_request`. */
export function invalid(message: string): CairnError {
  return new CairnError("invalid_request", message);
}

/** A repeated field. */
export function readList(value: unknown, where: string): readonly unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(`${where} must be an array`);
  return value;
}

/** A message field. */
export function readMessage(value: unknown, where: string): Readonly<Record<string, unknown>> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value) || value instanceof Uint8Array) {
    throw invalid(`${where} must be an object`);
  }
  return value as Record<string, unknown>;
}

/** A string field. */
export function readString(value: unknown, where: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw invalid(`${where} must be a string`);
  return value;
}

const maxUint64 = 2n ** 64n - 1n;

/** A `fixed64` time in Unix nanoseconds: a decimal string or, in OTLP/JSON, a number. */
export function readUnixNano(value: unknown, where: string): bigint {
  if (value === undefined || value === null) return 0n;
  let nanos: bigint | undefined;
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) nanos = BigInt(value);
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) nanos = BigInt(value);
  if (nanos === undefined || nanos > maxUint64) {
    throw invalid(
      `${where} must be Unix time in nanoseconds, a non-negative integer (as a string or a number), but is ${JSON.stringify(value)}`,
    );
  }
  return nanos;
}

const statusCodes: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** `Status.code`: OTLP/JSON writes enums as integers; the names are accepted too. */
export function readStatusCode(value: unknown, where: string): number {
  if (value === undefined || value === null) return 0;
  const code = typeof value === "string" ? statusCodes[value] : value;
  if (typeof code !== "number" || !Number.isInteger(code)) {
    throw invalid(
      `${where} must be a status code (0 unset, 1 ok, 2 error), but is ${JSON.stringify(value)}`,
    );
  }
  return code;
}

/**
 * A trace or span id: bytes in protobuf, hex in OTLP/JSON. Lowercase hex, or null when the
 * field is empty.
 */
export function readId(value: unknown, bytes: 16 | 8, label: string, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (value instanceof Uint8Array) {
    if (value.byteLength === 0) return null;
    if (value.byteLength !== bytes) {
      throw invalid(`${where} has a ${label} of ${value.byteLength} bytes; expected ${bytes}`);
    }
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
  }
  if (typeof value !== "string") throw invalid(`${where} has a ${label} that is not a hex string`);
  if (value === "") return null;
  if (!/^[0-9a-fA-F]*$/.test(value)) {
    throw invalid(
      `${where} has a ${label} that is not hex (${JSON.stringify(value.slice(0, 48))}); OTLP/JSON writes ids as hex, not base64`,
    );
  }
  if (value.length !== bytes * 2) {
    throw invalid(
      `${where} has a ${label} of ${value.length / 2} bytes (${value.length} hex digits); expected ${bytes} (${bytes * 2} hex digits)`,
    );
  }
  return value.toLowerCase();
}
