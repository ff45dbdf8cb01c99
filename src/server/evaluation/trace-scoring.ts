import type { ExportedSpan } from "../../core/wire/index.js";
import {
  clipDocuments,
  recordedDocuments,
  recordedText,
} from "../../tracing/scoring/recorded-text.js";
import type { ScorerInput } from "../../tracing/scoring/types.js";
import { ApiError } from "../http/api-error.js";

/** What a scorer reads from a recorded trace: the scored span's texts and the trace's documents. */
export interface TraceScoringInput {
  /** The span scored: the one asked for, else the trace's root. */
  readonly span: ExportedSpan;
  readonly input: ScorerInput;
}

/**
 * The input, output and expected output of the span (the root by default; a missing expected
 * output is taken from the root), and as context the documents every `retrieval` span of the
 * trace returned.
 */
export function scoringInputFromTrace(
  traceId: string,
  spans: readonly ExportedSpan[],
  spanId: string | undefined,
  options: { outputGiven?: boolean } = {},
): TraceScoringInput {
  const root =
    spans.find((span) => span.parent_span_id === null || span.attributes["cairn.root"] === true) ??
    spans[0];
  const span = spanId === undefined ? root : spans.find((each) => each.span_id === spanId);
  if (span === undefined) {
    throw new ApiError(
      "not_found",
      spanId === undefined ? `no trace ${traceId}` : `trace ${traceId} has no span ${spanId}`,
    );
  }
  const output = recordedText(span.output) ?? (options.outputGiven ? "" : undefined);
  if (output === undefined) {
    throw new ApiError(
      "invalid_request",
      `span ${span.span_id} ("${span.name}") of trace ${traceId} recorded no output to score; pass span_id of a span that did`,
    );
  }
  const context = clipDocuments(
    spans
      .filter((each) => each.kind === "retrieval")
      .flatMap((each) => recordedDocuments(each.output)),
  );
  return {
    span,
    input: {
      input: recordedText(span.input),
      output,
      expected: recordedText(span.expected_output ?? root?.expected_output),
      context: context.length === 0 ? undefined : context,
    },
  };
}
