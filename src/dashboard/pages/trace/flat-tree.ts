// A trace's span tree laid flat once, in depth-first order, in typed arrays: a 25,000-span trace
// costs a few arrays, not an object per row. Which rows show is worked out from the set of
// collapsed spans by skipping each collapsed span's descendants (they follow it, up to end[i]).

import type { TraceSpan } from "../../../core/wire/traces.js";

export interface FlatTree {
  /** The spans in depth-first order, children by start time. */
  readonly spans: readonly TraceSpan[];
  readonly depth: Uint16Array;
  /** The parent's index, -1 for a root. */
  readonly parent: Int32Array;
  /** One past the index of the span's last descendant. */
  readonly end: Int32Array;
  /** Position among its siblings (from 1) and how many siblings there are, for screen readers. */
  readonly position: Int32Array;
  readonly siblings: Int32Array;
  /** Start and duration, ms from the trace's start. */
  readonly offsetMs: Float64Array;
  readonly durationMs: Float64Array;
  /** How long the trace is, from its first start to its last end (at least 1 ms). */
  readonly totalMs: number;
  readonly startMs: number;
  readonly indexById: ReadonlyMap<string, number>;
}

export function flattenTree(roots: readonly TraceSpan[]): FlatTree {
  let count = 0;
  const counting: TraceSpan[] = [...roots];
  while (counting.length > 0) {
    const span = counting.pop() as TraceSpan;
    count++;
    for (const child of span.children) counting.push(child);
  }
  const spans: TraceSpan[] = new Array(count);
  const depth = new Uint16Array(count);
  const parent = new Int32Array(count);
  const end = new Int32Array(count);
  const position = new Int32Array(count);
  const siblings = new Int32Array(count);
  const offsetMs = new Float64Array(count);
  const durationMs = new Float64Array(count);
  const indexById = new Map<string, number>();

  // Depth-first without recursion (a chain of spans can be deep): a stack of what is next.
  interface Frame {
    readonly span: TraceSpan;
    readonly parent: number;
    readonly depth: number;
    readonly position: number;
    readonly siblings: number;
  }
  const stack: Frame[] = [];
  const pushAll = (list: readonly TraceSpan[], parentIndex: number, level: number) => {
    for (let index = list.length - 1; index >= 0; index--) {
      stack.push({
        span: list[index] as TraceSpan,
        parent: parentIndex,
        depth: level,
        position: index + 1,
        siblings: list.length,
      });
    }
  };
  pushAll(roots, -1, 0);
  let next = 0;
  let firstStart = Number.POSITIVE_INFINITY;
  let lastEnd = Number.NEGATIVE_INFINITY;
  const starts = new Float64Array(count);
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const index = next++;
    spans[index] = frame.span;
    depth[index] = Math.min(frame.depth, 65_535);
    parent[index] = frame.parent;
    position[index] = frame.position;
    siblings[index] = frame.siblings;
    indexById.set(frame.span.span_id, index);
    const start = Date.parse(frame.span.start_time);
    starts[index] = start;
    durationMs[index] = frame.span.duration_ms;
    firstStart = Math.min(firstStart, start);
    lastEnd = Math.max(lastEnd, start + frame.span.duration_ms);
    pushAll(frame.span.children, index, frame.depth + 1);
  }
  // end[i]: a span's descendants are the indexes after it up to the next one not deeper.
  for (let index = count - 1; index >= 0; index--) {
    let after = index + 1;
    while (after < count && (depth[after] as number) > (depth[index] as number)) {
      after = end[after] as number;
    }
    end[index] = after;
  }
  const startMs = Number.isFinite(firstStart) ? firstStart : 0;
  for (let index = 0; index < count; index++) {
    offsetMs[index] = (starts[index] as number) - startMs;
  }
  return {
    spans,
    depth,
    parent,
    end,
    position,
    siblings,
    offsetMs,
    durationMs,
    totalMs: Math.max(1, Number.isFinite(lastEnd) ? lastEnd - startMs : 1),
    startMs,
    indexById,
  };
}

export function hasChildren(tree: FlatTree, index: number): boolean {
  return (tree.end[index] as number) > index + 1;
}

/**
 * The rows shown, in order: every span whose ancestors are all expanded; with `only`, just the
 * spans marked in it and their ancestors.
 */
export function visibleRows(
  tree: FlatTree,
  collapsed: ReadonlySet<number>,
  only?: Uint8Array,
): Int32Array {
  const count = tree.spans.length;
  const rows = new Int32Array(count);
  let shown = 0;
  let keep: Uint8Array | undefined;
  if (only !== undefined) {
    // A match's ancestors show too, so that it is seen where it is.
    keep = new Uint8Array(count);
    for (let index = 0; index < count; index++) {
      if (only[index] !== 1) continue;
      for (let at = index; at >= 0 && keep[at] !== 1; at = tree.parent[at] as number) keep[at] = 1;
    }
  }
  for (let index = 0; index < count; ) {
    if (keep !== undefined && keep[index] !== 1) {
      index = tree.end[index] as number;
      continue;
    }
    rows[shown++] = index;
    index = collapsed.has(index) ? (tree.end[index] as number) : index + 1;
  }
  return rows.subarray(0, shown);
}

/** The indexes of a span's ancestors, nearest first. */
export function ancestorsOf(tree: FlatTree, index: number): number[] {
  const found: number[] = [];
  for (let at = tree.parent[index] as number; at >= 0; at = tree.parent[at] as number) {
    found.push(at);
  }
  return found;
}
