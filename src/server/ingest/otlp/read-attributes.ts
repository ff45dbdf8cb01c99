import type { WireAttributes, WireValue } from "./otlp-records.js";
import { invalid, readList, readMessage } from "./read-fields.js";

/** A plain JavaScript value of an OTLP AnyValue: kvlists become objects, bytes base64. */
export type Plain =
  | string
  | number
  | boolean
  | readonly (Plain | null)[]
  | { readonly [key: string]: Plain };

const maxDepth = 64;

/**
 * OTLP `repeated KeyValue` as wire attributes. Strings, booleans and numbers stay as they are;
 * arrays of one primitive type stay arrays; kvlists, nested arrays and arrays of mixed values
 * become JSON strings, and bytes base64 strings. Empty values are left out, as the
 * OpenTelemetry JS SDK leaves out undefined attributes.
 */
export function readAttributes(value: unknown, where: string): WireAttributes {
  const entries: Array<[string, WireValue]> = [];
  for (const [key, plain] of readKeyValues(value, where, 0)) {
    entries.push([key, toWireValue(plain)]);
  }
  // fromEntries defines own properties, so a "__proto__" key is data, not a prototype.
  return Object.fromEntries(entries);
}

/**
 * One OTLP `AnyValue` (a log record's body) as a plain value, or undefined when it is empty.
 * Unlike an attribute, a kvlist stays an object.
 */
export function readValue(value: unknown, where: string): Plain | undefined {
  return readAnyValue(value, where, 0);
}

function readKeyValues(value: unknown, where: string, depth: number): Array<[string, Plain]> {
  const entries: Array<[string, Plain]> = [];
  for (const [index, item] of readList(value, where).entries()) {
    const entry = readMessage(item, `${where}[${index}]`);
    const key = entry.key;
    if (typeof key !== "string" || key === "") {
      throw invalid(`${where}[${index}] has no key; every attribute needs a non-empty string key`);
    }
    const plain = readAnyValue(entry.value, `${where}[${index}] ("${key}")`, depth);
    if (plain !== undefined) entries.push([key, plain]);
  }
  return entries;
}

function readAnyValue(value: unknown, where: string, depth: number): Plain | undefined {
  if (depth > maxDepth) throw invalid(`${where} nests values more than ${maxDepth} levels deep`);
  const any = readMessage(value, where);
  const present = (name: string) => any[name] !== undefined && any[name] !== null;
  if (present("stringValue")) return typed(any.stringValue, "string", "stringValue", where);
  if (present("boolValue")) return typed(any.boolValue, "boolean", "boolValue", where);
  if (present("intValue")) return readInt(any.intValue, where);
  if (present("doubleValue")) return readDouble(any.doubleValue, where);
  if (present("arrayValue")) {
    const values = readList(readMessage(any.arrayValue, where).values, `${where}.arrayValue`);
    // An empty item keeps its position, as null: ["a", null, "b"] stays three items.
    return values.map(
      (item, index) =>
        readAnyValue(item, `${where}.arrayValue.values[${index}]`, depth + 1) ?? null,
    );
  }
  if (present("kvlistValue")) {
    const values = readMessage(any.kvlistValue, where).values;
    return Object.fromEntries(readKeyValues(values, `${where}.kvlistValue.values`, depth + 1));
  }
  if (present("bytesValue")) {
    const bytes = any.bytesValue;
    if (bytes instanceof Uint8Array) {
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
    }
    return typed(bytes, "string", "bytesValue", where);
  }
  return undefined;
}

function typed(
  value: unknown,
  type: "string" | "boolean",
  field: string,
  where: string,
): string | boolean {
  if (typeof value !== type) throw invalid(`${where} has a ${field} that is not a ${type}`);
  return value as string | boolean;
}

// int64 arrives as a decimal string (protobuf, and OTLP/JSON by the spec) or a JSON number.
// Past 2^53 a number would silently change, so such values stay exact as strings.
function readInt(value: unknown, where: string): number | string {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d{1,19}$/.test(value)) {
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value;
  }
  throw invalid(`${where} has an intValue that is not an integer: ${JSON.stringify(value)}`);
}

function readDouble(value: unknown, where: string): number {
  if (typeof value === "number") return value;
  // Protobuf JSON writes non-finite doubles as these strings.
  if (value === "NaN" || value === "Infinity" || value === "-Infinity") return Number(value);
  throw invalid(`${where} has a doubleValue that is not a number: ${JSON.stringify(value)}`);
}

// Mirrors the SDK's own conversion (tracing/export/to-exported-span.ts) for what OpenTelemetry
// JS can hold, and keeps anything richer as JSON so nothing is lost.
// Arrays of one primitive type keep their nulls, as OpenTelemetry allows.
function toWireValue(plain: Plain): WireValue {
  if (typeof plain === "number") return Number.isFinite(plain) ? plain : String(plain);
  if (typeof plain === "string" || typeof plain === "boolean") return plain;
  if (!isArray(plain)) return JSON.stringify(plain);
  const items = plain.filter((item) => item !== null);
  if (items.every((item) => typeof item === "string")) return [...plain] as (string | null)[];
  if (items.every((item) => typeof item === "number" && Number.isFinite(item))) {
    return [...plain] as (number | null)[];
  }
  if (items.every((item) => typeof item === "boolean")) return [...plain] as (boolean | null)[];
  if (items.every((item) => typeof item !== "object")) {
    return plain.map((item) => (item === null ? null : String(item)));
  }
  return JSON.stringify(plain);
}

function isArray(plain: Plain): plain is readonly (Plain | null)[] {
  return Array.isArray(plain);
}
