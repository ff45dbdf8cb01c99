import { getTrace, listTraces, type TraceSpan, type TraceSummary } from "../../index.js";
import { formatTable } from "../../tracing/evals/text-table.js";
import { formatCost, formatDuration, formatTraceTree } from "../../tracing/export/format-tree.js";
import type { ConnectionOptions } from "../program/connection.js";
import type { ListOptions } from "../program/traces.js";
import { serviceEndpoint } from "./service-address.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);

/** `cairn traces list`: the project's recent traces as a table. */
export async function list(options: ListOptions, write: Write = stdout): Promise<number> {
  const page = await listTraces({
    ...serviceEndpoint(options),
    limit: options.limit,
    ...(options.session === undefined ? {} : { session_id: options.session }),
    ...(options.tag === undefined ? {} : { tag: options.tag }),
    ...(options.service === undefined ? {} : { service: options.service }),
    ...(options.status === undefined ? {} : { status: options.status }),
  });
  write(formatTraceList(page.traces));
  return 0;
}

/** `cairn traces show <id>`: a trace as a tree. */
export async function show(
  traceId: string,
  options: ConnectionOptions,
  write: Write = stdout,
): Promise<number> {
  const trace = await getTrace(traceId, serviceEndpoint(options));
  write(`${formatTraceTree(flatten(trace.spans))}\n`);
  return 0;
}

function flatten(nodes: readonly TraceSpan[]): Omit<TraceSpan, "children">[] {
  return nodes.flatMap(({ children, ...span }) => [span, ...flatten(children)]);
}

function formatTraceList(rows: readonly TraceSummary[]): string {
  if (rows.length === 0) return "no traces in the last 30 days\n";
  const table = rows.map((row) => [
    row.trace_id,
    row.start_time.replace("T", " ").slice(0, 19),
    `${row.kind ?? "?"} ${row.name ?? "(no root yet)"}`,
    formatDuration(row.duration_ms),
    String(row.span_count),
    String(row.usage.total_tokens),
    formatCost(row.cost_usd),
    row.status,
  ]);
  const header = [
    "trace",
    "started (UTC)",
    "root",
    "duration",
    "spans",
    "tokens",
    "cost",
    "status",
  ];
  return formatTable(header, table);
}
