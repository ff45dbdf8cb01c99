import type { AgentLogLine } from "../../core/wire/agents.js";
import { EventRing } from "../http/event-stream.js";

/** A log line with the id its event stream gives it (for Last-Event-ID). */
export interface NumberedLogLine extends AgentLogLine {
  readonly id: number;
}

/** The longest line kept, in characters: the rest is cut, saying so. */
const maxLineLength = 8192;

/**
 * `text`, or its first `max` characters and how many more there were. The cut is a copy: V8
 * keeps the whole of a string alive for as long as a slice of it lives, and a line that a process
 * in an agent's sandbox wrote may be 16 MiB.
 */
export function cutLine(text: string, max = maxLineLength): string {
  if (text.length <= max) return text;
  const kept = Buffer.from(text.slice(0, max), "utf16le").toString("utf16le");
  return `${kept}… (${text.length - max} more characters)`;
}

interface AgentLog {
  readonly ring: EventRing<NumberedLogLine>;
  /** Each follower's line listener, and what ends its stream. */
  readonly listeners: Map<(line: NumberedLogLine) => void, () => void>;
  nextId: number;
}

/**
 * The recent log lines of each agent, in memory: its core's stderr (and any stdout that is not
 * a protocol line) and what the service did with it (starting, installing, crashing). A ring
 * per agent, the oldest lines dropped first; followers get each line as it comes.
 */
export class AgentLogs {
  private readonly logs = new Map<string, AgentLog>();

  constructor(private readonly linesKept = 2000) {}

  private log(agentId: string): AgentLog {
    let log = this.logs.get(agentId);
    if (log === undefined) {
      log = { ring: new EventRing(this.linesKept, 0), listeners: new Map(), nextId: 1 };
      this.logs.set(agentId, log);
    }
    return log;
  }

  add(agentId: string, stream: AgentLogLine["stream"], text: string): void {
    const log = this.log(agentId);
    const line: NumberedLogLine = {
      id: log.nextId++,
      time: new Date().toISOString(),
      stream,
      line: cutLine(text),
    };
    log.ring.push(line);
    for (const listener of log.listeners.keys()) listener(line);
  }

  /** The last `tail` lines kept (after `afterId`, when resuming), oldest first. */
  lines(agentId: string, tail: number, afterId = 0): NumberedLogLine[] {
    const kept = this.logs.get(agentId)?.ring.since(afterId) ?? [];
    return tail >= kept.length ? kept : kept.slice(kept.length - tail);
  }

  /**
   * Calls `listener` with each line from now on, and `end` when no more will come (the agent
   * was deleted, the service is closing); returns what stops it.
   */
  follow(
    agentId: string,
    listener: (line: NumberedLogLine) => void,
    end: () => void = () => undefined,
  ): () => void {
    const log = this.log(agentId);
    log.listeners.set(listener, end);
    return () => log.listeners.delete(listener);
  }

  /** Forgets an agent's lines (it was deleted), ending its followers. */
  forget(agentId: string): void {
    const log = this.logs.get(agentId);
    this.logs.delete(agentId);
    for (const end of log?.listeners.values() ?? []) end();
  }

  /** Ends every follower (the service is closing). */
  close(): void {
    for (const log of this.logs.values()) {
      const ends = [...log.listeners.values()];
      log.listeners.clear();
      for (const end of ends) end();
    }
  }
}
