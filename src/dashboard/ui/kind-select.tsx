// A labelled choice of one span kind, or any: the kinds in words, from the service's list.

import type { SpanKind } from "../../core/wire/span-kind.js";

/** Every span kind, checked by the compiler against the service's list. */
export const spanKindLabels = {
  agent: "agent",
  chain: "chain",
  llm: "llm",
  tool: "tool",
  retrieval: "retrieval",
  embedding: "embedding",
} as const satisfies Record<SpanKind, string>;

/** The kind a URL parameter names, or undefined. */
export function parseSpanKindParam(value: string | null | undefined): SpanKind | undefined {
  return value != null && value in spanKindLabels ? (value as SpanKind) : undefined;
}

export function KindSelect(props: {
  value: SpanKind | undefined;
  onChange: (kind: string) => void;
  /** The choice of none: "Any kind". */
  anyLabel?: string;
  className?: string;
}) {
  return (
    <label className={props.className}>
      <span>Kind</span>
      <select
        value={props.value ?? ""}
        onChange={(event) => props.onChange(event.currentTarget.value)}
      >
        <option value="">{props.anyLabel ?? "Any kind"}</option>
        {Object.entries(spanKindLabels).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}
