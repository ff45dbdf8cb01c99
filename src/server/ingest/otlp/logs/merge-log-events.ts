import type { ExportedSpanEvent } from "../../../../core/wire/index.js";
import { eventMessages } from "./log-messages.js";

/** The most events a span keeps; log events past it are dropped. */
export const maxEventsPerSpan = 1_000;

/** The parts of a stored span that its log records change. */
export interface SpanContent {
  readonly events: readonly ExportedSpanEvent[];
  readonly input: string | null;
  readonly output: string | null;
}

/**
 * A span with log events added: the events in time order, and its input and output filled
 * from the GenAI events among them when the span has none of its own. An input or output that
 * earlier log events filled is filled again from all of them, so records of one call arriving
 * in several requests make one message list. An event equal to one the span has (same name,
 * time and attributes) is not added again, so a retried export changes nothing.
 */
export function mergeLogEvents(
  span: SpanContent,
  added: readonly ExportedSpanEvent[],
): SpanContent {
  // Log records carry no id: an event equal to one the span has is a retried export.
  const seen = new Set(span.events.map((event) => JSON.stringify(event)));
  const fresh: ExportedSpanEvent[] = [];
  for (const event of added) {
    const key = JSON.stringify(event);
    if (seen.has(key)) continue;
    seen.add(key);
    fresh.push(event);
  }
  const room = Math.max(0, maxEventsPerSpan - span.events.length);
  if (room === 0 || fresh.length === 0) return span;
  const before = eventMessages(span.events);
  // A stable sort: events of the same millisecond keep the order they were sent in.
  const events = [...span.events, ...fresh.slice(0, room)].sort(
    (a, b) => Date.parse(a.time) - Date.parse(b.time),
  );
  const after = eventMessages(events);
  const fill = (own: string | null, old: string | undefined, now: string | undefined) =>
    own === null || own === old ? (now ?? own) : own;
  return {
    events,
    input: fill(span.input, before.input, after.input),
    output: fill(span.output, before.output, after.output),
  };
}
