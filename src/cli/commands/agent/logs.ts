import type { AgentLogLine } from "../../../sandbox/index.js";
import type { LogsOptions } from "../../program/agent.js";
import { formatTime } from "../sandbox/table.js";
import { agentsOf, findAgent } from "./client.js";
import { dim } from "./terminal.js";

/** `logs`: the agent's log lines; with -f, new ones as they come until Ctrl-C. */
export async function printLogs(nameOrId: string, options: LogsOptions): Promise<number> {
  const agents = agentsOf(options);
  const agent = await findAgent(agents, nameOrId);
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  process.once("SIGINT", stop);
  try {
    for await (const line of agents.logs(agent.id, {
      follow: options.follow === true,
      ...(options.tail === undefined ? {} : { tail: options.tail }),
      signal: stopped.signal,
    })) {
      process.stdout.write(formatLine(line));
    }
  } finally {
    process.removeListener("SIGINT", stop);
  }
  return 0;
}

/** `2025-01-02 03:04:05 stderr  the line`; the service's own lines dim. */
function formatLine(line: AgentLogLine): string {
  const text = `${formatTime(line.time)} ${line.stream.padEnd(7)} ${line.line}\n`;
  return line.stream === "service" ? dim(text, process.stdout) : text;
}
