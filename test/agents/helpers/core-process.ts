// Runs the built agent core as the service does: a child process speaking JSON lines, here on
// the host with the system's Node 20 (what sandboxes get), a workspace in a temporary folder.

import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { agentCorePath } from "../../../src/agents/index.js";
import type { AgentCoreConfig, CoreToServiceMessage } from "../../../src/agents/protocol.js";

/** The Node that sandboxes get: Debian's, v20. */
export const sandboxNode = "/usr/bin/node";

/** Why the core cannot be run here, if it cannot. */
export function sandboxNodeMissing(): string | undefined {
  if (!existsSync(sandboxNode)) return `${sandboxNode} is not installed`;
  const version = execFileSync(sandboxNode, ["--version"], { encoding: "utf8" }).trim();
  const major = Number(/^v(\d+)/.exec(version)?.[1] ?? 0);
  return major >= 20 ? undefined : `${sandboxNode} is ${version}; the agent core needs Node ≥ 20`;
}

export interface CoreProcess {
  readonly events: CoreToServiceMessage[];
  readonly stderr: () => string;
  /** Writes one line: an object as JSON, a string as it is. */
  send(message: unknown): void;
  /** The first event (already received or still to come) that matches. */
  waitFor<T extends CoreToServiceMessage>(
    predicate: (event: CoreToServiceMessage) => event is T,
  ): Promise<T>;
  waitFor(predicate: (event: CoreToServiceMessage) => boolean): Promise<CoreToServiceMessage>;
  /** The exit code, once the process ended. */
  readonly exited: Promise<number | null>;
  close(): Promise<void>;
}

export interface StartCoreOptions {
  config: AgentCoreConfig;
  workspace: string;
  /** Added to a bare environment (PATH only): no proxy unless a test gives one. */
  env?: Record<string, string>;
}

export function startCore(options: StartCoreOptions): CoreProcess {
  const child: ChildProcessWithoutNullStreams = spawn(sandboxNode, [agentCorePath()], {
    cwd: options.workspace,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      CAIRN_AGENT_CONFIG: JSON.stringify(options.config),
      CAIRN_AGENT_WORKSPACE: options.workspace,
      ...options.env,
    },
  });
  const events: CoreToServiceMessage[] = [];
  const waiters: Array<() => void> = [];
  let stderr = "";
  let buffered = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    buffered += text;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) events.push(JSON.parse(line) as CoreToServiceMessage);
    for (const waiter of [...waiters]) waiter();
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on("close", (code) => {
      resolve(code);
      for (const waiter of [...waiters]) waiter();
    });
  });
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  function waitFor(predicate: (event: CoreToServiceMessage) => boolean) {
    return new Promise<CoreToServiceMessage>((resolve, reject) => {
      const check = () => {
        const found = events.find(predicate);
        if (found !== undefined) {
          waiters.splice(waiters.indexOf(check), 1);
          resolve(found);
        } else if (ended || child.exitCode !== null) {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`the core exited before the awaited event; its stderr:\n${stderr}`));
        }
      };
      waiters.push(check);
      check();
    });
  }
  return {
    events,
    stderr: () => stderr,
    send(message) {
      child.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
    },
    waitFor: waitFor as CoreProcess["waitFor"],
    exited,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        child.kill("SIGTERM");
      }
      await exited;
    },
  };
}

/** The events of one turn. */
export function turnEvents(core: CoreProcess, turnId: string): CoreToServiceMessage[] {
  return core.events.filter((event) => "turnId" in event && event.turnId === turnId);
}

/** An event's type, with runs of text deltas folded into one. */
export function eventTypes(events: readonly CoreToServiceMessage[]): string[] {
  const types: string[] = [];
  for (const event of events) {
    const type = event.type === "tool-call" ? `tool-call:${event.toolName}` : event.type;
    if (types.at(-1) !== type || (type !== "text-delta" && type !== "reasoning-delta")) {
      types.push(type);
    }
  }
  return types;
}

export function isTurnEnd(turnId: string) {
  return (event: CoreToServiceMessage) =>
    (event.type === "finish" || event.type === "turn-error") && event.turnId === turnId;
}
