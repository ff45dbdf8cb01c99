// A session read as a conversation: its turns (traces other than events recorded outside any
// call) and its events, in time order, each event placed after the turn it happened in.

import type { SessionEvent, SessionTrace } from "../../../core/wire/sessions.js";

export type Entry =
  | {
      readonly kind: "turn";
      readonly key: string;
      readonly turn: number;
      readonly trace: SessionTrace;
    }
  | {
      readonly kind: "event";
      readonly key: string;
      readonly event: SessionEvent;
      /** The turn whose call recorded it; undefined for an event outside any call. */
      readonly duringTurn: number | undefined;
    };

/**
 * Turns and events in time order. While more traces are to come (`complete` false), an event of a
 * trace not read yet, after the last one read, waits for the traces it belongs among.
 */
export function sessionEntries(
  traces: readonly SessionTrace[],
  events: readonly SessionEvent[],
  complete: boolean,
): Entry[] {
  const turns = traces.filter((trace) => !trace.session_event);
  const turnOfTrace = new Map(turns.map((trace, index) => [trace.trace_id, index + 1]));
  const read = new Set(traces.map((trace) => trace.trace_id));
  const lastRead = traces[traces.length - 1]?.start_time;
  const entries: Array<Entry & { at: number; order: number }> = turns.map((trace, index) => ({
    kind: "turn",
    key: `turn:${trace.trace_id}`,
    turn: index + 1,
    trace,
    at: Date.parse(trace.start_time),
    order: 0,
  }));
  for (const [index, event] of events.entries()) {
    if (!complete && !read.has(event.trace_id) && lastRead !== undefined && event.time > lastRead)
      continue;
    entries.push({
      kind: "event",
      key: `event:${event.span_id}:${index}`,
      event,
      duringTurn: turnOfTrace.get(event.trace_id),
      at: Date.parse(event.time),
      order: 1,
    });
  }
  // A turn comes before the events of its own call, which happen after it started.
  entries.sort((a, b) => a.at - b.at || a.order - b.order);
  return entries.map(({ at: _at, order: _order, ...entry }) => entry as Entry);
}
