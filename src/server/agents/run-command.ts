import {
  agentWorkspace,
  type RunCommandOutput,
  runCommandOutputLimit,
} from "../../agents/protocol.js";
import { CairnError } from "../../core/errors/index.js";
import type { SandboxRunner } from "../../sandbox/runner/runner.js";
import type { ExecReport } from "./turn-trace.js";

/** How long a command may run when the model gives no `timeoutSeconds`, and at most. */
const defaultTimeoutSeconds = 300;
const maxTimeoutSeconds = 3600;
const maxCommandBytes = 128 * 1024;

/** What `run_command` answers the core, and what its exec reports to its span. */
export interface RunCommandResult {
  readonly output: RunCommandOutput | string;
  readonly isError: boolean;
  readonly exec?: ExecReport;
}

/** One stream's text, kept up to the protocol's limit; what is over it is counted. */
class CappedText {
  #text = "";
  #bytes = 0;
  #dropped = 0;

  add(line: string): void {
    const piece = `${line}\n`;
    const size = Buffer.byteLength(piece);
    const room = runCommandOutputLimit - this.#bytes;
    if (size <= room) {
      this.#text += piece;
      this.#bytes += size;
      return;
    }
    if (room > 0) {
      const kept = Buffer.from(piece)
        .subarray(0, room)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
      this.#text += kept;
      this.#bytes += Buffer.byteLength(kept);
    }
    this.#dropped += size - Math.max(0, room);
    this.#bytes = runCommandOutputLimit;
  }

  get text(): string {
    return this.#dropped === 0
      ? this.#text
      : `${this.#text}\n[${this.#dropped} more bytes not shown: the output is cut at ${runCommandOutputLimit / 1024} KiB]`;
  }
}

/** The command and its timeout, or what is wrong with the model's input. */
function parseInput(input: unknown): { command: string; timeoutSeconds: number } | string {
  const { command, timeoutSeconds } = (input ?? {}) as Record<string, unknown>;
  if (typeof command !== "string" || command.trim() === "") {
    return 'run_command needs {"command": "<shell command>"}';
  }
  if (Buffer.byteLength(command) > maxCommandBytes || command.includes("\0")) {
    return `the command is over ${maxCommandBytes / 1024} KiB or holds a NUL character`;
  }
  if (timeoutSeconds === undefined) return { command, timeoutSeconds: defaultTimeoutSeconds };
  if (
    typeof timeoutSeconds !== "number" ||
    !Number.isFinite(timeoutSeconds) ||
    timeoutSeconds <= 0 ||
    timeoutSeconds > maxTimeoutSeconds
  ) {
    return `timeoutSeconds must be a number of seconds from 1 to ${maxTimeoutSeconds}`;
  }
  return { command, timeoutSeconds };
}

/**
 * Runs `run_command` in the agent's sandbox through the runner's exec (`sh -c`, cwd /workspace,
 * stdin closed), under the trace context given, so that its exec has CPU and memory figures and
 * its egress requests land in the turn's trace. Stdout and stderr are each cut at 16 KiB. An
 * abort kills it. Never throws: a command that cannot start is an error result for the model.
 */
export async function runCommand(options: {
  readonly runner: SandboxRunner;
  readonly projectId: string;
  readonly sandboxId: string;
  readonly input: unknown;
  readonly traceparent: string | undefined;
  readonly signal: AbortSignal;
}): Promise<RunCommandResult> {
  const parsed = parseInput(options.input);
  if (typeof parsed === "string") return { output: parsed, isError: true };
  const stdout = new CappedText();
  const stderr = new CappedText();
  const argv = ["sh", "-c", parsed.command];
  const startedAt = Date.now();
  let session: Awaited<ReturnType<SandboxRunner["exec"]>>;
  try {
    session = await options.runner.exec(
      options.projectId,
      options.sandboxId,
      {
        cmd: "sh",
        args: ["-c", parsed.command],
        env: {},
        cwd: agentWorkspace,
        pty: undefined,
        timeoutMs: Math.round(parsed.timeoutSeconds * 1000),
        ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent }),
      },
      {
        onLine: (stream, line) => (stream === "stdout" ? stdout : stderr).add(line),
        maxLineBytes: runCommandOutputLimit + 1,
      },
    );
  } catch (error) {
    const reason = CairnError.isInstance(error) ? error.message : "the sandbox could not start it";
    return { output: `the command could not start: ${reason}`, isError: true };
  }
  session.closeStdin();
  const kill = () => void session.kill("killed").catch(() => undefined);
  if (options.signal.aborted) kill();
  options.signal.addEventListener("abort", kill, { once: true });
  try {
    const exit = await session.wait();
    const record = session.record;
    const timedOut = record.state === "timed_out";
    const output: RunCommandOutput = {
      exitCode: exit.exitCode,
      stdout: stdout.text,
      stderr: timedOut
        ? `${stderr.text}[killed after ${parsed.timeoutSeconds} s: the command's timeoutSeconds]\n`
        : stderr.text,
    };
    const stopped = options.signal.aborted;
    return {
      output: stopped ? "the command was killed: the turn was stopped" : output,
      isError: stopped,
      exec: {
        sandboxId: options.sandboxId,
        execId: session.execId,
        command: argv,
        startedAt,
        endedAt: Date.now(),
        exitCode: exit.exitCode,
        signal: exit.signal,
        state: record.state,
        outputBytes: record.outputBytes,
        cpuSeconds: record.cpuSeconds,
        memoryPeakBytes: record.memoryPeakBytes,
      },
    };
  } finally {
    options.signal.removeEventListener("abort", kill);
  }
}
