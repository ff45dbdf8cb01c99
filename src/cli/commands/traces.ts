import { parseArgs } from "node:util";
import type { ExportedSpan } from "../../core/wire/index.js";
import { formatTable } from "../../tracing/evals/text-table.js";
import { formatCost, formatDuration, formatTraceTree } from "../../tracing/export/format-tree.js";
import { serviceEndpoint } from "./service-address.js";

export const tracesHelp = `Usage:
  cairn traces list [--limit 20] [--session <id>] [--tag <tag>] [--status ok|error]
  cairn traces show <trace-id>

Options: --endpoint (default CAIRN_ENDPOINT or http://127.0.0.1:7070), --api-key (default
CAIRN_API_KEY, or the key \`cairn dev\` saved in --data-dir, default ./.cairn).
`;

type SpanNode = ExportedSpan & { children: SpanNode[] };

interface TraceRow {
  trace_id: string;
  name: string | null;
  kind: string | null;
  start_time: string;
  duration_ms: number;
  status: string;
  span_count: number;
  usage: { total_tokens: number };
  cost_usd: number;
}

/** `cairn traces list|show`: reads traces from a running service. */
export async function traces(
  args: readonly string[],
  write: (text: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      endpoint: { type: "string" },
      "api-key": { type: "string" },
      "data-dir": { type: "string" },
      limit: { type: "string" },
      session: { type: "string" },
      tag: { type: "string" },
      status: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
  const [action, traceId] = positionals;
  if (values.help || action === undefined) {
    write(tracesHelp);
    return action === undefined && !values.help ? 2 : 0;
  }
  const { endpoint, apiKey } = serviceEndpoint({
    endpoint: values.endpoint,
    apiKey: values["api-key"],
    dataDir: values["data-dir"],
  });
  const get = (path: string) => request(endpoint, path, apiKey);
  if (action === "list") {
    const query = new URLSearchParams({ limit: values.limit ?? "20" });
    if (values.session !== undefined) query.set("session_id", values.session);
    if (values.tag !== undefined) query.set("tag", values.tag);
    if (values.status !== undefined) query.set("status", values.status);
    const page = (await get(`/analytics/traces?${query}`)) as { traces: TraceRow[] };
    write(formatTraceList(page.traces));
    return 0;
  }
  if (action === "show" && traceId !== undefined) {
    const trace = (await get(`/traces/${encodeURIComponent(traceId)}`)) as { spans: SpanNode[] };
    write(`${formatTraceTree(flatten(trace.spans))}\n`);
    return 0;
  }
  write(tracesHelp);
  return 2;
}

async function request(
  endpoint: string,
  path: string,
  apiKey: string | undefined,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${endpoint}${path}`, {
      headers: apiKey === undefined ? {} : { "x-api-key": apiKey },
    });
  } catch (error) {
    throw new Error(
      `cannot reach the Cairn service at ${endpoint} (${(error as Error).message}); start it with \`cairn dev\``,
    );
  }
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok) {
    throw new Error(`${response.status} from ${endpoint}${path}: ${body.message ?? "no message"}`);
  }
  return body;
}

function flatten(nodes: readonly SpanNode[]): ExportedSpan[] {
  return nodes.flatMap(({ children, ...span }) => [span, ...flatten(children)]);
}

function formatTraceList(rows: readonly TraceRow[]): string {
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
