import type { ExportedSpan } from "../../../core/wire/index.js";
import type { WireAttributes, WireValue } from "./otlp-records.js";

/** The most bytes one attribute value keeps (a string, or an array's items together). */
export const attributeLimitBytes = 32 * 1024;
/** The most bytes a span's input, output and expected output keep, each. */
export const payloadLimitBytes = 1024 * 1024;
/** The most bytes a span may hold once capped: past it, the span is refused. */
export const spanLimitBytes = 4 * 1024 * 1024;

/** Prefix of the attributes that record a capped value's size: `cairn.truncated.<key>`. */
export const truncatedPrefix = "cairn.truncated.";

/** A span with its values capped, and about how many bytes it holds. */
export interface CappedSpan {
  readonly span: ExportedSpan;
  readonly bytes: number;
}

/**
 * Caps the values of a span as OpenTelemetry's SDKs cap attributes, so one runaway value
 * (a base64 image, a whole document) cannot fill the store: each attribute value at
 * {@link attributeLimitBytes}, input, output and expected output at {@link payloadLimitBytes}.
 * A cut string ends with `…[truncated by Cairn: N bytes]`, N its size in UTF-8 before the cut,
 * and the span gets `cairn.truncated.<key>` = N (`input`, `output` and `expected_output` for
 * those). Event and link attributes are capped the same way, in their own attributes.
 */
export function capSpan(span: ExportedSpan): CappedSpan {
  const size = { bytes: 0 };
  const truncated: WireAttributes = {};
  const payload = (key: "input" | "output" | "expected_output") => {
    const value = span[key];
    if (value === null) return null;
    const capped = capString(value, payloadLimitBytes);
    if (capped.originalBytes !== undefined)
      truncated[`${truncatedPrefix}${key}`] = capped.originalBytes;
    size.bytes += capped.bytes;
    return capped.value;
  };
  const input = payload("input");
  const output = payload("output");
  const expectedOutput = payload("expected_output");
  const attributes = capAttributes(span.attributes, size);
  const events = span.events.map((event) => ({
    ...event,
    attributes: capAttributes(event.attributes, size),
  }));
  const links = span.links?.map((link) => ({
    ...link,
    attributes: capAttributes(link.attributes, size),
  }));
  size.bytes += textBytes(span.status_message ?? "") + textBytes(span.name);
  size.bytes += textBytes(JSON.stringify(span.metadata));
  return {
    span: {
      ...span,
      input,
      output,
      expected_output: expectedOutput,
      attributes: { ...attributes, ...truncated },
      events,
      ...(links === undefined ? {} : { links }),
    },
    bytes: size.bytes,
  };
}

/**
 * Attributes with each value capped at {@link attributeLimitBytes}, and `cairn.truncated.<key>`
 * for each value that was cut. `size.bytes` grows by what the capped attributes hold.
 */
export function capAttributes(
  attributes: WireAttributes,
  size: { bytes: number } = { bytes: 0 },
): WireAttributes {
  let capped: WireAttributes | undefined;
  for (const [key, value] of Object.entries(attributes)) {
    size.bytes += key.length;
    const result = capValue(value);
    size.bytes += result.bytes;
    if (result.originalBytes === undefined) continue;
    capped ??= { ...attributes };
    capped[key] = result.value;
    capped[`${truncatedPrefix}${key}`] = result.originalBytes;
  }
  return capped ?? attributes;
}

interface Capped<T> {
  readonly value: T;
  /** About how many bytes the capped value holds. */
  readonly bytes: number;
  /** The value's size before the cut; undefined when nothing was cut. */
  readonly originalBytes?: number;
}

function capValue(value: WireValue): Capped<WireValue> {
  if (typeof value === "string") return capString(value, attributeLimitBytes);
  if (!Array.isArray(value)) return { value, bytes: 8 };
  // Items are kept whole while they fit; a first string item that alone is too long is cut.
  let bytes = 0;
  let originalBytes = 0;
  let cut = false;
  const items: (string | number | boolean | null)[] = [];
  for (const item of value) {
    const itemBytes = typeof item === "string" ? textBytes(item) : 8;
    originalBytes += itemBytes;
    if (cut) continue;
    if (bytes + itemBytes <= attributeLimitBytes) {
      items.push(item);
      bytes += itemBytes;
      continue;
    }
    cut = true;
    if (items.length === 0 && typeof item === "string") {
      const first = capString(item, attributeLimitBytes);
      items.push(first.value);
      bytes += first.bytes;
    }
  }
  if (!cut) return { value, bytes };
  return { value: items as WireValue, bytes, originalBytes };
}

const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8, counted only when it could be over a limit worth knowing. */
function textBytes(text: string): number {
  // At most three bytes per UTF-16 unit: short strings are counted by their length.
  return text.length <= 1024 ? text.length : Buffer.byteLength(text);
}

function capString(value: string, limit: number): Capped<string> {
  if (value.length * 3 <= limit) return { value, bytes: textBytes(value) };
  const originalBytes = Buffer.byteLength(value);
  if (originalBytes <= limit) return { value, bytes: originalBytes };
  const marker = `…[truncated by Cairn: ${originalBytes} bytes]`;
  const room = new Uint8Array(limit - Buffer.byteLength(marker));
  // encodeInto stops before a character that does not fit whole, so no character is split.
  const { read } = encoder.encodeInto(value, room);
  const kept = value.slice(0, read) + marker;
  return { value: kept, bytes: limit, originalBytes };
}
