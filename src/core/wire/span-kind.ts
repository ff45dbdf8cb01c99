import { z } from "zod";

/** The kinds of span Cairn records, in the order the documentation lists them. */
export const spanKinds = ["chain", "retrieval", "tool", "agent", "llm", "embedding"] as const;

export type SpanKind = (typeof spanKinds)[number];

const kindAliases: Readonly<Record<string, SpanKind>> = { retriever: "retrieval" };

/** The kind a user wrote, with `retriever` read as `retrieval`; undefined when it is no kind. */
export function parseSpanKind(input: string): SpanKind | undefined {
  const lower = input.toLowerCase();
  const kind = kindAliases[lower] ?? lower;
  return (spanKinds as readonly string[]).includes(kind) ? (kind as SpanKind) : undefined;
}

/** A span kind on input: any of {@link spanKinds}, and `retriever` as an alias of `retrieval`. */
export const spanKindSchema = z.string().transform((input, context): SpanKind => {
  const kind = parseSpanKind(input);
  if (kind === undefined) {
    context.addIssue({
      code: "custom",
      message: `"${input}" is not a span kind; use one of ${spanKinds.join(", ")} (retriever is accepted as retrieval)`,
    });
    return z.NEVER;
  }
  return kind;
});
