import { memo } from "react";
import { type ExecFollower, type ExecTarget, useExecOutput } from "./exec-output.js";
import type { ToolCallPart } from "./types.js";

// A sandbox exec's tool, or a managed agent's run_command (its output has exitCode, stdout and
// stderr, but no exec to follow).
const execToolNames = new Set(["sandbox.exec", "sandbox_exec", "sandbox-exec", "run_command"]);

const stateLabels: Record<ToolCallPart["state"], string> = {
  "input-streaming": "Preparing",
  "input-available": "Running",
  "output-available": "Done",
  "output-error": "Failed",
};

function fields(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The exec a tool call started, from its output or input carrying `{ sandboxId?, execId }`. */
export function execTargetOf(
  part: ToolCallPart,
  sandboxId: string | undefined,
): ExecTarget | undefined {
  for (const value of [part.output, part.input]) {
    const object = fields(value);
    const execId = object?.execId;
    const owner = typeof object?.sandboxId === "string" ? object.sandboxId : sandboxId;
    if (typeof execId === "string" && owner !== undefined) return { sandboxId: owner, execId };
  }
  return undefined;
}

/** True for a tool call that runs a command in a sandbox. */
export function isExecTool(part: ToolCallPart): boolean {
  if (execToolNames.has(part.toolName)) return true;
  return [part.output, part.input].some((value) => typeof fields(value)?.execId === "string");
}

/** The command line a tool call's input asks for. */
function commandOf(input: unknown): string | undefined {
  const object = fields(input);
  if (object === undefined) return typeof input === "string" ? input : undefined;
  const command = object.command ?? object.cmd;
  const args = Array.isArray(object.args) ? object.args.map(String) : [];
  if (Array.isArray(command)) return command.map(String).join(" ");
  if (typeof command === "string") return [command, ...args].join(" ");
  return undefined;
}

function json(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** What a finished exec tool's output says it printed, when there is no exec to follow. */
function staticOutput(output: unknown): string {
  const object = fields(output);
  if (object === undefined) return typeof output === "string" ? output : "";
  const text = [object.stdout, object.stderr, object.output].filter(
    (value): value is string => typeof value === "string",
  );
  return text.join("");
}

function exitLabel(exitCode: number | null | undefined, signal: string | null | undefined) {
  if (typeof exitCode === "number") return `Exit ${exitCode}`;
  if (typeof signal === "string") return `Killed (${signal})`;
  return undefined;
}

// --- Generic tool card ---------------------------------------------------------------------

/** A tool call as a collapsible card: its name and state, then its input and output. */
export const ToolCard = memo(function ToolCard({
  part,
  sandboxId,
  follower,
}: {
  readonly part: ToolCallPart;
  readonly sandboxId: string | undefined;
  readonly follower: ExecFollower | undefined;
}) {
  if (isExecTool(part)) {
    return <ExecToolCard part={part} sandboxId={sandboxId} follower={follower} />;
  }
  const name = part.title ?? part.toolName;
  return (
    <details className="cairn-chat-tool" data-state={part.state}>
      <summary>
        <span className="cairn-chat-tool-name">{name}</span>
        <span className="cairn-chat-tool-state" data-state={part.state}>
          {stateLabels[part.state]}
        </span>
      </summary>
      <div className="cairn-chat-tool-body">
        <ToolSection label="Input" text={json(part.input)} />
        {part.state === "output-available" && (
          <ToolSection label="Output" text={json(part.output)} />
        )}
        {part.errorText !== undefined && <ToolSection label="Error" text={part.errorText} error />}
      </div>
    </details>
  );
});

function ToolSection({
  label,
  text,
  error = false,
}: {
  readonly label: string;
  readonly text: string;
  readonly error?: boolean;
}) {
  return (
    <div className="cairn-chat-tool-section" data-error={error || undefined}>
      <div className="cairn-chat-tool-label">{label}</div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard */}
      <pre className="cairn-chat-pre" tabIndex={0}>
        {text === "" ? "—" : text}
      </pre>
    </div>
  );
}

// --- Sandbox exec card ---------------------------------------------------------------------

/** A command run in a sandbox: the command, its output as it streams, its exit code. */
function ExecToolCard({
  part,
  sandboxId,
  follower,
}: {
  readonly part: ToolCallPart;
  readonly sandboxId: string | undefined;
  readonly follower: ExecFollower | undefined;
}) {
  const target = execTargetOf(part, sandboxId);
  const live = useExecOutput(target, follower);
  const output = fields(part.output);
  const command = commandOf(part.input) ?? live.command ?? commandOf(output) ?? "…";
  const exitCode =
    live.exit?.exitCode ?? (typeof output?.exitCode === "number" ? output.exitCode : undefined);
  // An exec that can no longer be followed (gone from the runner) shows what its output said.
  const followed = live.status !== "idle" && !(live.status === "error" && live.output === "");
  const text = followed ? live.output : staticOutput(part.output);
  const exited = exitLabel(exitCode, live.exit?.signal);
  const failed =
    part.state === "output-error" || (live.status === "error" && exitCode === undefined);
  // Followed live, the exec says when it ends; else the tool call's own state does (an output
  // that carries only the exec's ids is preliminary: the command still runs).
  const running = followed
    ? live.status === "running"
    : !failed && (part.state === "input-streaming" || part.state === "input-available");
  const state = exited ?? (failed ? "Failed" : running ? "Running" : stateLabels[part.state]);
  const errorText = part.errorText ?? (failed ? live.error : undefined);
  return (
    <details
      className="cairn-chat-tool cairn-chat-exec"
      data-state={running ? "running" : failed ? "error" : "done"}
      open
    >
      <summary>
        <span className="cairn-chat-tool-name">{part.title ?? part.toolName}</span>
        <code className="cairn-chat-exec-command">$ {command}</code>
        <span
          className="cairn-chat-tool-state"
          data-state={running ? "running" : failed || (exitCode ?? 0) !== 0 ? "error" : "done"}
        >
          {state}
        </span>
      </summary>
      <div className="cairn-chat-tool-body">
        {live.truncated && <p className="cairn-chat-tool-note">Earlier output not shown.</p>}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard */}
        <pre className="cairn-chat-pre cairn-chat-exec-output" tabIndex={0}>
          {text === "" ? (running ? "Waiting for output…" : "No output.") : text}
        </pre>
        {errorText !== undefined && <p className="cairn-chat-tool-error">{errorText}</p>}
      </div>
    </details>
  );
}
