import type { ExportedSpan } from "../../core/wire/index.js";

type SpanNode = ExportedSpan & { omitted?: string[]; children: SpanNode[] };

/**
 * Spans nested under their parents; spans whose parent is not stored are roots. Every span is
 * in the tree once: where parents form a loop (a span its own parent, or two each the other's),
 * the loop's earliest span is a root.
 */
export function toTree(flat: readonly ExportedSpan[]): SpanNode[] {
  const nodes = new Map(
    flat.map((span) => [span.span_id, { ...span, children: [] as SpanNode[] }]),
  );
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parent_span_id === null ? undefined : nodes.get(node.parent_span_id);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  const placed = new Set<SpanNode>();
  const place = (root: SpanNode) => {
    const pending = [root];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      placed.add(node);
      pending.push(...node.children);
    }
  };
  for (const root of roots) place(root);
  // What no root reaches hangs in a loop; the spans come oldest first.
  for (const node of nodes.values()) {
    if (placed.has(node)) continue;
    const parent = nodes.get(node.parent_span_id ?? "");
    if (parent !== undefined) parent.children = parent.children.filter((child) => child !== node);
    roots.push(node);
    place(node);
  }
  return roots;
}

/**
 * The JSON text of span trees, written without recursion: a trace may nest spans thousands deep
 * (an agent's loop), deeper than JSON.stringify can follow. Keys in the order JSON.stringify
 * gives them, `children` last.
 */
export function treeJson(roots: readonly SpanNode[]): string {
  const parts: string[] = [];
  const work: Array<SpanNode | string> = [];
  const pushList = (list: readonly SpanNode[]) => {
    work.push("]");
    for (let index = list.length - 1; index >= 0; index--) {
      work.push(list[index] as SpanNode);
      if (index > 0) work.push(",");
    }
    work.push("[");
  };
  pushList(roots);
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if (typeof item === "string") {
      parts.push(item);
      continue;
    }
    const { children, ...span } = item;
    const head = JSON.stringify(span);
    parts.push(head.length > 2 ? `${head.slice(0, -1)},"children":` : '{"children":');
    work.push("}");
    pushList(children);
  }
  return parts.join("");
}
