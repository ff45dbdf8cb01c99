import type { ExportedSpan } from "../../core/wire/index.js";

/**
 * A trace as an indented tree, one line per span with kind, name, duration, model, tokens,
 * cost and errors; used by the console exporter and `cairn traces show`.
 *
 * @example
 * tr_0af7651916cd43dd8448eb211c80319c · 1.24 s · 812 tokens · $0.000217
 * └─ agent support-agent  1.24 s
 *    ├─ retrieval search-docs  45.1 ms
 *    └─ llm draft-answer  850 ms  gpt-4o-mini  tokens 600+212=812  $0.000217
 */
export function formatTraceTree(spans: readonly ExportedSpan[]): string {
  if (spans.length === 0) return "";
  const ids = new Set(spans.map((span) => span.span_id));
  const children = new Map<string | null, ExportedSpan[]>();
  for (const span of spans) {
    const parent =
      span.parent_span_id !== null && ids.has(span.parent_span_id) ? span.parent_span_id : null;
    const siblings = children.get(parent) ?? [];
    siblings.push(span);
    children.set(parent, siblings);
  }
  for (const siblings of children.values()) {
    siblings.sort((a, b) => a.start_time.localeCompare(b.start_time));
  }
  const roots = children.get(null) ?? [];
  const lines = [header(spans, roots)];
  const visit = (span: ExportedSpan, prefix: string, last: boolean) => {
    lines.push(`${prefix}${last ? "└─ " : "├─ "}${describe(span)}`);
    const below = children.get(span.span_id) ?? [];
    below.forEach((child, index) => {
      visit(child, `${prefix}${last ? "   " : "│  "}`, index === below.length - 1);
    });
  };
  roots.forEach((root, index) => {
    visit(root, "", index === roots.length - 1);
  });
  return lines.join("\n");
}

function header(spans: readonly ExportedSpan[], roots: readonly ExportedSpan[]): string {
  const first = spans[0] as ExportedSpan;
  const start = Math.min(...spans.map((span) => Date.parse(span.start_time)));
  const end = Math.max(...spans.map((span) => Date.parse(span.end_time)));
  // One root: its own (sub-millisecond) duration; several: the wall-clock span of all of them.
  const duration = roots.length === 1 ? (roots[0] as ExportedSpan).duration_ms : end - start;
  const tokens = spans.reduce((sum, span) => sum + (span.usage?.total_tokens ?? 0), 0);
  const cost = spans.reduce((sum, span) => sum + (span.cost_usd ?? 0), 0);
  const parts = [first.trace_id, formatDuration(duration)];
  if (tokens > 0) parts.push(`${tokens} tokens`);
  if (cost > 0) parts.push(formatCost(cost));
  if (first.session_id !== null) parts.push(`session ${first.session_id}`);
  return parts.join(" · ");
}

function describe(span: ExportedSpan): string {
  const parts = [`${span.kind} ${span.name}`, formatDuration(span.duration_ms)];
  if (span.model !== null) parts.push(span.model);
  if (span.usage !== null) {
    const { prompt_tokens, completion_tokens, total_tokens } = span.usage;
    parts.push(`tokens ${prompt_tokens}+${completion_tokens}=${total_tokens}`);
  }
  if (span.cost_usd !== null) parts.push(formatCost(span.cost_usd));
  const unavailable = span.attributes["cairn.cost.unavailable"];
  if (typeof unavailable === "string") parts.push(`cost unknown (${unavailable})`);
  if (span.status === "error") parts.push(`ERROR ${span.status_message ?? ""}`.trimEnd());
  return parts.join("  ");
}

/** `0.42 ms`, `45.1 ms`, `1.24 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms < 100 ? ms.toFixed(1) : Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** `$0.000217`, `$0.0123`, `$1.50`. */
export function formatCost(usd: number): string {
  if (usd === 0) return "$0";
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  // Three significant digits, without trailing zeros: $0.000036, $0.0123.
  const digits = Math.min(12, 2 - Math.floor(Math.log10(usd)));
  return `$${usd.toFixed(digits).replace(/0+$/, "")}`;
}
