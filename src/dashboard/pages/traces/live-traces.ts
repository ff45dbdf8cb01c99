// New traces while the page is open (the project's "trace" events): a trace already listed is
// shown as it is now, in place; a new one that belongs in the view goes to the top when the
// reader is at the top of the first page, newest first; otherwise it waits behind a button, so
// the list never moves under the reader and the focus stays where it is.

import { type QueryKey, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useCallback, useEffect, useState } from "react";
import type { TraceList } from "../../../core/wire/traces.js";
import { useProjectEvents } from "../../api/events.js";
import { rowMatches, showsNewestFirst, type TraceRow, type TraceView } from "./trace-view.js";

export interface LiveTraces {
  /** New traces held back (their ids), and whether some of them may not belong in the view. */
  readonly waiting: number;
  readonly uncertain: boolean;
  /** The list may have missed changes (the stream said to read it again). */
  readonly stale: boolean;
  /** Rows that came live, for a moment's mark. */
  readonly fresh: ReadonlySet<string>;
  /** Clears what waits, once the page shows it (read again, or gone to the first page). */
  readonly clear: () => void;
}

/** The most rows the first page grows to with live traces. */
const maxRows = 200;

export function useLiveTraces(
  view: TraceView,
  queryKey: QueryKey,
  /** The list's top: live rows go in only while it is in sight. */
  top: RefObject<HTMLElement | null>,
): LiveTraces {
  const client = useQueryClient();
  const [waiting, setWaiting] = useState<ReadonlySet<string>>(new Set());
  const [uncertain, setUncertain] = useState(false);
  const [stale, setStale] = useState(false);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const keyText = JSON.stringify(queryKey);

  const clear = useCallback(() => {
    setWaiting(new Set());
    setUncertain(false);
    setStale(false);
  }, []);
  // Another view: what waited was for the one before.
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyText stands for the view
  useEffect(clear, [keyText, clear]);
  useEffect(() => {
    if (fresh.size === 0) return undefined;
    const timer = setTimeout(() => setFresh(new Set()), 4_000);
    return () => clearTimeout(timer);
  }, [fresh]);

  useProjectEvents((type, data) => {
    if (type === "resync") {
      setStale(true);
      return;
    }
    if (type !== "trace") return;
    const row = data as TraceRow;
    const page = client.getQueryData<TraceList>(queryKey);
    if (page === undefined) return;
    const listed = page.traces.findIndex((each) => each.trace_id === row.trace_id);
    if (listed >= 0) {
      // A listed trace grew: the same row, as it is now.
      const traces = page.traces.slice();
      traces[listed] = row;
      client.setQueryData<TraceList>(queryKey, { ...page, traces });
      return;
    }
    const matches = rowMatches(row, view);
    if (matches === false) return;
    const element = top.current;
    const inSight = element !== null && element.getBoundingClientRect().top >= 0;
    if (matches === true && showsNewestFirst(view) && inSight && page.traces.length < maxRows) {
      // The next page's cursor still follows the last row: nothing is skipped or repeated.
      client.setQueryData<TraceList>(queryKey, { ...page, traces: [row, ...page.traces] });
      setFresh((before) => new Set(before).add(row.trace_id));
      return;
    }
    setWaiting((before) => (before.has(row.trace_id) ? before : new Set(before).add(row.trace_id)));
    if (matches === undefined) setUncertain(true);
  });

  return { waiting: waiting.size, uncertain, stale, fresh, clear };
}
