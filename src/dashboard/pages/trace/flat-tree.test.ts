import { describe, expect, it } from "vitest";
import type { TraceSpan } from "../../../core/wire/traces.js";
import { ancestorsOf, flattenTree, hasChildren, visibleRows } from "./flat-tree.js";

function node(name: string, startMs: number, durationMs: number, children: TraceSpan[] = []) {
  return {
    span_id: name,
    name,
    start_time: new Date(Date.UTC(2026, 10, 20, 10) + startMs).toISOString(),
    duration_ms: durationMs,
    children,
  } as unknown as TraceSpan;
}

// root ─┬─ a ─┬─ a1
//       │     └─ a2 ── a2x
//       └─ b
// other (a second root)
const roots = [
  node("root", 0, 100, [
    node("a", 10, 50, [node("a1", 10, 5), node("a2", 20, 30, [node("a2x", 25, 5)])]),
    node("b", 70, 40),
  ]),
  node("other", 200, 10),
];
const names = (tree: ReturnType<typeof flattenTree>, rows: Int32Array) =>
  [...rows].map((index) => tree.spans[index]?.name);

describe("flattenTree", () => {
  it("lays the tree out depth first, with each span's level, parent, place and subtree", () => {
    const tree = flattenTree(roots);
    expect(tree.spans.map((span) => span.name)).toEqual([
      "root",
      "a",
      "a1",
      "a2",
      "a2x",
      "b",
      "other",
    ]);
    expect([...tree.depth]).toEqual([0, 1, 2, 2, 3, 1, 0]);
    expect([...tree.parent]).toEqual([-1, 0, 1, 1, 3, 0, -1]);
    expect([...tree.end]).toEqual([6, 5, 3, 5, 5, 6, 7]);
    expect([...tree.position]).toEqual([1, 1, 1, 2, 1, 2, 2]);
    expect([...tree.siblings]).toEqual([2, 2, 2, 2, 1, 2, 2]);
    expect(tree.totalMs).toBe(210);
    expect(tree.offsetMs[6]).toBe(200);
    expect(hasChildren(tree, 1)).toBe(true);
    expect(hasChildren(tree, 2)).toBe(false);
    expect(ancestorsOf(tree, 4)).toEqual([3, 1, 0]);
    expect(tree.indexById.get("b")).toBe(5);
  });

  it("shows what collapsed spans leave, and a search's matches with the spans above them", () => {
    const tree = flattenTree(roots);
    expect(names(tree, visibleRows(tree, new Set()))).toHaveLength(7);
    expect(names(tree, visibleRows(tree, new Set([1])))).toEqual(["root", "a", "b", "other"]);
    expect(names(tree, visibleRows(tree, new Set([0])))).toEqual(["root", "other"]);
    const only = new Uint8Array(7);
    only[4] = 1;
    expect(names(tree, visibleRows(tree, new Set(), only))).toEqual(["root", "a", "a2", "a2x"]);
  });

  it("flattens a chain of 20,000 spans without running out of stack", () => {
    let chain = node("leaf", 0, 1);
    for (let level = 0; level < 20_000; level++) chain = node(`s${level}`, 0, 1, [chain]);
    const tree = flattenTree([chain]);
    expect(tree.spans).toHaveLength(20_001);
    expect(tree.depth[20_000]).toBe(20_000);
    expect(tree.end[0]).toBe(20_001);
  });
});
