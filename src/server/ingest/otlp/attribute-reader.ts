import { maxSessionIdLength, maxSpanCostUsd } from "../../../core/wire/index.js";
import type { WireAttributes, WireValue } from "./otlp-records.js";

/** Reads one kind of value out of an attribute, or undefined when the value is not of it. */
export type ValueReader<T> = (value: WireValue) => T | undefined;

/**
 * Reads span attributes into fields, and keeps track of which were used. An attribute is
 * lifted out of the remaining attributes only when its value became a field's value, so a
 * value Cairn cannot use (a model name that is a number, a second model name that differs
 * from the first) is kept rather than lost.
 */
export class AttributeReader {
  private readonly lifted = new Set<string>();

  constructor(private readonly values: WireAttributes) {}

  /** The value of an attribute, used or not. */
  get(key: string): WireValue | undefined {
    return this.has(key) ? this.values[key] : undefined;
  }

  /** The keys that start with `prefix`, in the order the span has them. */
  keysUnder(prefix: string): string[] {
    return Object.keys(this.values).filter((key) => key.startsWith(prefix));
  }

  /** Whether the span has the attribute, used or not. */
  has(key: string): boolean {
    return Object.hasOwn(this.values, key);
  }

  /**
   * The value of the first of `keys` that `read` accepts, and every key among them holding
   * that same value (aliases such as `llm.model_name` and `gen_ai.request.model`).
   */
  find<T>(
    keys: readonly string[],
    read: ValueReader<T>,
  ): { readonly value: T; readonly keys: readonly string[] } | undefined {
    let found: T | undefined;
    const holders: string[] = [];
    for (const key of keys) {
      const value = this.has(key) ? read(this.values[key] as WireValue) : undefined;
      if (value === undefined || (found !== undefined && value !== found)) continue;
      found = value;
      holders.push(key);
    }
    return found === undefined ? undefined : { value: found, keys: holders };
  }

  /** {@link find}, lifting the keys that held the value. */
  take<T>(keys: readonly string[], read: ValueReader<T>): T | undefined {
    const found = this.find(keys, read);
    if (found !== undefined) this.lift(found.keys);
    return found?.value;
  }

  /** Marks attributes as used, so {@link rest} leaves them out. */
  lift(keys: readonly string[]): void {
    for (const key of keys) this.lifted.add(key);
  }

  /** The attributes not lifted into a field, plus `extra` where the span has no such key. */
  rest(extra: WireAttributes = {}): WireAttributes {
    const entries = Object.entries(this.values).filter(([key]) => !this.lifted.has(key));
    for (const [key, value] of Object.entries(extra)) {
      if (!this.has(key)) entries.push([key, value]);
    }
    return Object.fromEntries(entries);
  }
}

/** A string value. */
export const text: ValueReader<string> = (value) => (typeof value === "string" ? value : undefined);

/** A non-empty string value. */
export const name: ValueReader<string> = (value) =>
  typeof value === "string" && value !== "" ? value : undefined;

/**
 * A session id: a non-empty string up to maxSessionIdLength (export-batch.ts). A longer one is
 * no session Cairn can show, and stays where it was.
 */
export const sessionId: ValueReader<string> = (value) =>
  typeof value === "string" && value !== "" && value.length <= maxSessionIdLength
    ? value
    : undefined;

/** A token count: a non-negative integer, or its decimal string (int64 may arrive as one). */
export const count: ValueReader<number> = (value) => {
  if (typeof value === "number")
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  return typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
};

/** A cost in USD: a non-negative number up to maxSpanCostUsd (export-batch.ts). */
export const amount: ValueReader<number> = (value) =>
  typeof value === "number" && value >= 0 && value <= maxSpanCostUsd ? value : undefined;

/**
 * A list of strings, without the array's empty (null) items; a single string is a list of one,
 * unless it is a JSON list of strings (OpenInference's `setTags` writes `tag.tags` that way).
 */
export const strings: ValueReader<string[]> = (value) => {
  if (typeof value === "string") return jsonStrings(value) ?? [value];
  if (!Array.isArray(value)) return undefined;
  const items = value.filter((item) => item !== null);
  return items.every((item) => typeof item === "string") ? (items as string[]) : undefined;
};

function jsonStrings(text: string): string[] | undefined {
  if (!text.startsWith("[")) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === "string")
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}
