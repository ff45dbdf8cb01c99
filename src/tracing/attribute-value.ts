import type { Attributes, AttributeValue } from "@opentelemetry/api";
import { type SerializeOptions, serialize } from "./serialize.js";

/** A value as an OpenTelemetry attribute: primitives and flat arrays as they are, the rest JSON. */
export function toAttributeValue(value: unknown, options: SerializeOptions): AttributeValue {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return value;
  }
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
    return value as string[];
  }
  if (Array.isArray(value) && value.every((item) => typeof item === "number")) {
    return value as number[];
  }
  return serialize(value ?? null, options)?.text ?? "null";
}

export function toAttributes(
  values: Readonly<Record<string, unknown>>,
  options: SerializeOptions,
): Attributes {
  const converted: Attributes = {};
  for (const [key, value] of Object.entries(values))
    converted[key] = toAttributeValue(value, options);
  return converted;
}
