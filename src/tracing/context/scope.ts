import type { Context } from "@opentelemetry/api";
import type { ObservedSpan } from "../observed-span.js";

/**
 * What a traced call passes down to everything it calls: its span (the parent of the next
 * span), and what every span below inherits — session, tags, version.
 */
export interface Scope {
  readonly span: ObservedSpan | undefined;
  /** The OpenTelemetry context holding `span`, the parent context of child spans. */
  readonly otelContext: Context | undefined;
  readonly sessionId: string | undefined;
  readonly tags: readonly string[];
  readonly version: string | undefined;
}

export const emptyScope: Scope = {
  span: undefined,
  otelContext: undefined,
  sessionId: undefined,
  tags: [],
  version: undefined,
};

/** Tags of a parent and a child, parent first, each once. */
export function mergeTags(parent: readonly string[], own: readonly string[] | undefined) {
  if (own === undefined || own.length === 0) return parent;
  if (parent.length === 0) return own;
  return [...new Set([...parent, ...own])];
}
