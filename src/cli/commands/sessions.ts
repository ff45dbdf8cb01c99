import { getSession, listSessions, type SessionSummary } from "../../index.js";
import { formatTable } from "../../tracing/evals/text-table.js";
import { formatCost, formatDuration } from "../../tracing/export/format-tree.js";
import type { ConnectionOptions } from "../program/connection.js";
import type { SessionListOptions } from "../program/sessions.js";
import { serviceEndpoint } from "./service-address.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);
const time = (iso: string) => iso.replace("T", " ").slice(0, 19);

/** `cairn sessions list`: the project's recent sessions as a table. */
export async function list(options: SessionListOptions, write: Write = stdout): Promise<number> {
  const page = await listSessions({
    ...serviceEndpoint(options),
    limit: options.limit,
    ...(options.tag === undefined ? {} : { tag: options.tag }),
  });
  write(formatSessionList(page.sessions));
  return 0;
}

/** `cairn sessions show <id>`: a session's totals, traces and events. */
export async function show(
  sessionId: string,
  options: ConnectionOptions,
  write: Write = stdout,
): Promise<number> {
  const session = await getSession(sessionId, { ...serviceEndpoint(options), limit: 500 });
  write(
    `session ${session.session_id}: ${session.trace_count} traces, ${session.span_count} spans, ${session.error_count} errors, ${session.usage.total_tokens} tokens, ${formatCost(session.cost_usd)}\n\n`,
  );
  const turns = session.traces.map((trace) => [
    time(trace.start_time),
    `${trace.kind ?? "?"} ${trace.name ?? "(no root yet)"}`,
    formatDuration(trace.duration_ms),
    String(trace.usage.total_tokens),
    formatCost(trace.cost_usd),
    trace.status,
    oneLine(trace.input),
  ]);
  write(
    formatTable(["started (UTC)", "root", "duration", "tokens", "cost", "status", "input"], turns),
  );
  if (session.next_cursor !== null) write("(the first 500 traces)\n");
  for (const event of session.events) write(`event ${time(event.time)} ${event.name}\n`);
  return 0;
}

function formatSessionList(rows: readonly SessionSummary[]): string {
  if (rows.length === 0) return "no sessions in the last 30 days\n";
  const table = rows.map((row) => [
    row.session_id,
    time(row.start_time),
    time(row.end_time),
    String(row.trace_count),
    String(row.usage.total_tokens),
    formatCost(row.cost_usd),
    String(row.error_count),
    row.tags.join(", "),
  ]);
  const header = [
    "session",
    "first (UTC)",
    "last (UTC)",
    "traces",
    "tokens",
    "cost",
    "errors",
    "tags",
  ];
  return formatTable(header, table);
}

function oneLine(text: string | null): string {
  if (text === null) return "";
  const line = text.replace(/\s+/g, " ");
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
