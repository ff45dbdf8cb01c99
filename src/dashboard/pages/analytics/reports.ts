// The three analytics reports of a period, asked for together with the same range, interval,
// grouping and kind; and whether the project has any span at all, for the empty state.

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import type {
  AnalyticsGroupBy,
  AnalyticsInterval,
  CostReport,
  MetricsReport,
  PerformanceReport,
} from "../../../core/wire/analytics.js";
import type { SpanKind } from "../../../core/wire/span-kind.js";
import { api, queryString } from "../../api/client.js";
import { useProjectEvents } from "../../api/events.js";
import type { Period } from "./period.js";

export interface Reports {
  readonly metrics: MetricsReport;
  readonly costs: CostReport;
  readonly performance: PerformanceReport;
  /** As asked for: while another grouping loads, the page still shows these as they are. */
  readonly grouping: Grouping;
  readonly interval: AnalyticsInterval;
}

/** What the page groups by; `none` shows the totals alone. */
export type Grouping = AnalyticsGroupBy | "none";

const queryKey = "analytics";

/** New traces refresh the charts at most this often. */
const refreshMs = 10_000;

export function useReports(period: Period | undefined, grouping: Grouping, kind: SpanKind | null) {
  const query = {
    ...period?.range,
    interval: period?.interval,
    // Without a grouping the groups are not shown; kinds are few, so they cost least.
    group_by: grouping === "none" ? "kind" : grouping,
    kind: kind ?? undefined,
  };
  const search = queryString(query);
  useLiveRefresh();
  return useQuery({
    queryKey: [queryKey, search],
    enabled: period !== undefined,
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }): Promise<Reports> => {
      const [metrics, costs, performance] = await Promise.all([
        api<MetricsReport>(`/analytics/metrics${search}`, { signal }),
        api<CostReport>(`/analytics/costs${search}`, { signal }),
        api<PerformanceReport>(`/analytics/performance${search}`, { signal }),
      ]);
      return { metrics, costs, performance, grouping, interval: period?.interval ?? "day" };
    },
  });
}

/** Whether the project has stored any span, whenever it started: asked only when `ask`. */
export function useProjectHasSpans(ask: boolean) {
  return useQuery({
    queryKey: [queryKey, "ever"],
    enabled: ask,
    queryFn: async ({ signal }) => {
      const report = await api<MetricsReport>(
        `/analytics/metrics${queryString({ period_start: "1970-01-01", period_end: "9999-12-31", group_by: "kind" })}`,
        { signal },
      );
      return report.totals.span_count > 0;
    },
  });
}

/** Refetches the reports when traces arrive (at most every 10 s) or the stream resyncs. */
function useLiveRefresh(): void {
  const client = useQueryClient();
  const last = useRef(0);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(pending.current), []);
  useProjectEvents((type) => {
    if (type !== "trace" && type !== "resync") return;
    if (pending.current !== undefined) return;
    const wait = Math.max(0, last.current + refreshMs - Date.now());
    pending.current = setTimeout(() => {
      pending.current = undefined;
      last.current = Date.now();
      void client.invalidateQueries({ queryKey: [queryKey] });
    }, wait);
  });
}
