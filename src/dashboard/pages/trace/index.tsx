// One trace: its totals, its scores, and its spans as a tree beside a waterfall, with the span
// selected (?span= in the URL) shown in full beside it. The tree comes without payloads
// (GET /traces/{id}?payloads=false) and is laid flat once; a span's input and output are
// fetched when it is shown.

import { usePrefetchQuery, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "wouter";
import type { TraceDetail, TraceSummary } from "../../../core/wire/traces.js";
import { api } from "../../api/client.js";
import { useProjectEvents } from "../../api/events.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../../format.js";
import { CopyButton } from "../../ui/copy-button.js";
import { Figures } from "../../ui/figures.js";
import { ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { useUrlParams } from "../../url-state.js";
import { ancestorsOf, type FlatTree, flattenTree, hasChildren, visibleRows } from "./flat-tree.js";
import { ScoresPanel, scoresQuery } from "./scores-panel.js";
import { SpanDetails } from "./span-details.js";
import { SpanTree } from "./span-tree.js";
import { Timescale } from "./timescale.js";
import { TraceToolbar } from "./trace-toolbar.js";
import "../../ui/field.css";
import "./trace.css";

function traceQuery(traceId: string) {
  return {
    queryKey: ["trace", traceId],
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      api<TraceDetail>(`/traces/${encodeURIComponent(traceId)}?payloads=false`, { signal }),
    staleTime: 60_000,
  };
}

export default function TracePage() {
  const { traceId = "" } = useParams<{ traceId: string }>();
  // Asked for while rendering: React holds a lazily loaded page back up to 300 ms before
  // showing it, and the request need not wait for that.
  usePrefetchQuery(traceQuery(traceId));
  usePrefetchQuery(scoresQuery(traceId));
  const trace = useQuery(traceQuery(traceId));
  if (trace.isPending) return <Loading label="Loading the trace…" />;
  if (trace.isError) {
    return (
      <>
        <PageHeader title="Trace" description={traceId} />
        <ErrorNotice
          error={trace.error}
          doing="load this trace"
          retry={() => void trace.refetch()}
        />
        <p>
          <Link href="/traces">Back to the traces</Link>
        </p>
      </>
    );
  }
  return <TraceView trace={trace.data} reload={() => void trace.refetch()} />;
}

function TraceView(props: { trace: TraceDetail; reload: () => void }) {
  const { trace } = props;
  // The trace may still be running: its new spans are offered, not pushed into the tree.
  const [grown, setGrown] = useState<number | undefined>();
  useProjectEvents((type, data) => {
    const row = data as TraceSummary;
    if (
      type === "trace" &&
      row.trace_id === trace.trace_id &&
      row.span_count !== trace.span_count
    ) {
      setGrown(row.span_count);
    }
  });
  // Read again: what it grew to is shown.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the trace read anew is the cause
  useEffect(() => setGrown(undefined), [trace]);
  const tree = useMemo(() => flattenTree(trace.spans), [trace.spans]);
  const [params, change] = useUrlParams();
  const find = params.get("find") ?? "";
  const only = params.get("only") === "1" && find !== "";
  const raw = params.get("raw") === "1";
  const selectedId = params.get("span");
  const selected = selectedId === null ? -1 : (tree.indexById.get(selectedId) ?? -1);

  const [collapsed, setCollapsed] = useState<ReadonlySet<number>>(() => new Set());
  const [focused, setFocused] = useState(selected >= 0 ? selected : 0);
  const focusRequest = useRef(false);

  const matches = useMemo(() => matchesOf(tree, find), [tree, find]);
  const matchCount = useMemo(() => (matches === undefined ? 0 : count(matches)), [matches]);
  const rows = useMemo(
    () => visibleRows(tree, collapsed, only ? matches : undefined),
    [tree, collapsed, only, matches],
  );

  // A span selected from the URL (a shared link, Back) is shown where it is: its ancestors open.
  useEffect(() => {
    if (selected < 0) return;
    setFocused(selected);
    setCollapsed((before) => {
      const closed = ancestorsOf(tree, selected).filter((index) => before.has(index));
      if (closed.length === 0) return before;
      const next = new Set(before);
      for (const index of closed) next.delete(index);
      return next;
    });
  }, [selected, tree]);

  const setExpanded = useCallback((index: number, expanded: boolean) => {
    setCollapsed((before) => {
      if (before.has(index) !== expanded) return before;
      const next = new Set(before);
      if (expanded) next.delete(index);
      else next.add(index);
      return next;
    });
  }, []);
  const select = useCallback(
    (index: number) => {
      const span = tree.spans[index];
      if (span !== undefined) change({ span: span.span_id });
    },
    [tree, change],
  );
  const expandAll = () => setCollapsed(new Set());
  const collapseAll = () => {
    const all = new Set<number>();
    for (let index = 0; index < tree.spans.length; index++) {
      if (hasChildren(tree, index)) all.add(index);
    }
    setCollapsed(all);
    // The focus goes to the root above it, which stays in sight.
    let root = focused;
    while (root >= 0 && (tree.parent[root] as number) >= 0) root = tree.parent[root] as number;
    setFocused(Math.max(0, root));
  };
  const goToMatch = (step: 1 | -1) => {
    if (matches === undefined || matchCount === 0) return;
    const total = tree.spans.length;
    for (let offset = 1; offset <= total; offset++) {
      const index = (((focused + step * offset) % total) + total) % total;
      if (matches[index] === 1) {
        setFocused(index);
        select(index);
        return;
      }
    }
  };

  const node = selected >= 0 ? tree.spans[selected] : undefined;
  const root = tree.spans[0];
  return (
    <>
      <PageHeader
        title={trace.name ?? "Trace"}
        description={
          <>
            <span className="dash-mono">{trace.trace_id}</span> · started{" "}
            {formatTime(trace.start_time)}
          </>
        }
        actions={
          <>
            <CopyButton text={trace.trace_id} label="trace id" />
            <Link href="/traces" className="dash-button">
              All traces
            </Link>
          </>
        }
      />
      <Figures
        figures={[
          {
            label: "Status",
            value: (
              <span className="dash-badge" data-status={trace.status}>
                {trace.status === "error" ? "Error" : "OK"}
              </span>
            ),
            note:
              trace.error_count > 0
                ? `(${formatCount(trace.error_count)} failed ${trace.error_count === 1 ? "span" : "spans"})`
                : undefined,
          },
          { label: "Duration", value: formatDuration(trace.duration_ms) },
          { label: "Spans", value: formatCount(trace.span_count) },
          {
            label: "Tokens",
            value: formatCount(trace.usage.total_tokens),
            note: `(${formatCount(trace.usage.prompt_tokens)} in, ${formatCount(trace.usage.completion_tokens)} out)`,
          },
          { label: "Cost", value: formatCost(trace.cost_usd) },
          trace.session_id !== null && {
            label: "Session",
            value: (
              <Link href={`/sessions/${encodeURIComponent(trace.session_id)}`}>
                {trace.session_id}
              </Link>
            ),
          },
          trace.version !== null && { label: "Version", value: trace.version },
          trace.tags.length > 0 && { label: "Tags", value: trace.tags.join(", ") },
        ]}
      />
      {grown === undefined ? null : (
        <p className="trace-grown" role="status">
          <button type="button" className="dash-button dash-primary" onClick={props.reload}>
            The trace has {formatCount(grown)} spans now — show them
          </button>
        </p>
      )}
      <ScoresPanel
        traceId={trace.trace_id}
        span={node === undefined ? undefined : { id: node.span_id, name: node.name }}
        spanName={(spanId) => {
          const index = tree.indexById.get(spanId);
          return index === undefined ? undefined : tree.spans[index]?.name;
        }}
      />
      <div className="trace-split">
        <section className="trace-tree-panel" aria-label="Span tree and timeline">
          <TraceToolbar
            find={find}
            setFind={(text) =>
              change(
                { find: text, only: text === "" ? null : params.get("only") },
                { replace: true },
              )
            }
            matchCount={matches === undefined ? undefined : matchCount}
            only={only}
            setOnly={(value) => change({ only: value ? "1" : null }, { replace: true })}
            onMatch={goToMatch}
            onExpandAll={expandAll}
            onCollapseAll={collapseAll}
          />
          <Timescale totalMs={tree.totalMs} />
          {rows.length === 0 ? (
            <p className="dash-muted trace-no-rows">
              {root === undefined ? "This trace has no spans." : "No span matches the search."}
            </p>
          ) : (
            <SpanTree
              tree={tree}
              rows={rows}
              collapsed={collapsed}
              setExpanded={setExpanded}
              focused={focused}
              setFocused={setFocused}
              focusRequest={focusRequest}
              selected={selected}
              onSelect={select}
              matches={matches}
              find={find}
            />
          )}
        </section>
        <div className="trace-details-panel">
          {node === undefined ? (
            <p className="dash-muted trace-pick">
              Select a span (click it, or move to it with the arrow keys and press Enter) to see its
              input, output, attributes and events.
            </p>
          ) : (
            <SpanDetails
              key={node.span_id}
              traceId={trace.trace_id}
              node={node}
              offsetMs={tree.offsetMs[selected] as number}
              raw={raw}
              setRaw={(value) => change({ raw: value ? "1" : null }, { replace: true })}
            />
          )}
        </div>
      </div>
    </>
  );
}

/** Spans whose name, kind, model or id holds the search text (1 at their index). */
function matchesOf(tree: FlatTree, find: string): Uint8Array | undefined {
  const text = find.trim().toLowerCase();
  if (text === "") return undefined;
  const found = new Uint8Array(tree.spans.length);
  tree.spans.forEach((span, index) => {
    if (
      span.name.toLowerCase().includes(text) ||
      span.kind === text ||
      span.span_id === text ||
      (span.model?.toLowerCase().includes(text) ?? false)
    ) {
      found[index] = 1;
    }
  });
  return found;
}

function count(marks: Uint8Array): number {
  let total = 0;
  for (const mark of marks) total += mark;
  return total;
}
