import type { SpanKind } from "../../../../core/wire/index.js";

/** A field's value and the attributes that hold exactly it (lifted out when it is used). */
export interface Found<T> {
  readonly value: T;
  /** Empty for a value made from several attributes (messages, documents): those stay. */
  readonly keys: readonly string[];
}

/** A value built from attributes that stay on the span as they are. */
export function derived<T>(value: T | undefined): Found<T> | undefined {
  return value === undefined ? undefined : { value, keys: [] };
}

/** Token counts as a convention reports them; any may be missing. */
export interface FoundUsage {
  readonly prompt?: Found<number> | undefined;
  readonly completion?: Found<number> | undefined;
  readonly total?: Found<number> | undefined;
  readonly cached?: Found<number> | undefined;
  readonly reasoning?: Found<number> | undefined;
}

/**
 * What one convention reads from a span. Each convention fills what it knows; the mapping
 * takes each field from the first convention that has it (see conventions/index.ts).
 */
export interface ConventionFields {
  readonly kind?: Found<SpanKind> | undefined;
  readonly name?: Found<string> | undefined;
  readonly model?: Found<string> | undefined;
  readonly usage?: FoundUsage | undefined;
  readonly cost?: Found<number> | undefined;
  readonly input?: Found<string> | undefined;
  readonly output?: Found<string> | undefined;
  readonly session?: Found<string> | undefined;
  /** The end user, kept as the `user.id` attribute. */
  readonly user?: Found<string> | undefined;
  readonly tags?: Found<string[]> | undefined;
  readonly metadata?: Found<Record<string, unknown>> | undefined;
  /** Why the span failed, when the convention says so outside the OTLP status. */
  readonly error?: Found<string> | undefined;
}
