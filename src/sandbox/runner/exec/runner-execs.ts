import { SandboxError, SandboxLimitError } from "../../../core/errors/index.js";
import type { ExecRecord } from "../../../core/wire/exec-protocol.js";
import type { ResolvedExecRequest } from "../../../core/wire/exec-request.js";
import type { SandboxDriver } from "../driver.js";
import { finishedExecsKept, type LiveSandbox, type RunnerLimits } from "../live-sandbox.js";
import type { ExecOptions, RunnerSettings } from "../runner-settings.js";
import { ExecSession } from "./exec-session.js";
import { OutputBudget } from "./output-buffer.js";

/**
 * The runner's execs: started in running sandboxes through their driver, at most
 * `execsPerSandbox` at once in each, their output buffers within the runner's budget, the
 * newest finished ones kept for `GET …/exec` and re-attach.
 */
export class RunnerExecs {
  private readonly outputBudget: OutputBudget;

  constructor(
    private readonly options: {
      readonly driver: SandboxDriver;
      readonly limits: RunnerLimits;
      readonly environmentFor?: RunnerSettings["environmentFor"] | undefined;
    },
  ) {
    this.outputBudget = new OutputBudget(options.limits.outputBudgetBytes);
  }

  async start(
    sandbox: LiveSandbox,
    request: ResolvedExecRequest,
    options: ExecOptions,
  ): Promise<ExecSession> {
    const cap = this.options.limits.execsPerSandbox;
    const running = [...sandbox.execs.values()].filter((each) => each.exited === undefined);
    // Execs still starting count too: concurrent requests cannot all pass the check.
    if (running.length + sandbox.startingExecs >= cap) {
      throw new SandboxLimitError(
        `sandbox ${sandbox.record.id} already has ${cap} execs running, the most a sandbox may (sandboxes.limits.execsPerSandbox); wait for some to end`,
      );
    }
    sandbox.startingExecs++;
    try {
      return await this.startNow(sandbox, request, options);
    } finally {
      sandbox.startingExecs--;
    }
  }

  /** The execs a user sees (not the service's own), oldest first. */
  records(sandbox: LiveSandbox): ExecRecord[] {
    return [...sandbox.execs.values()].filter((each) => !each.internal).map((each) => each.record);
  }

  /** An exec a user may follow; throws SandboxError `exec_not_found` for any other. */
  session(sandbox: LiveSandbox | undefined, sandboxId: string, execId: string): ExecSession {
    const session = sandbox?.execs.get(execId);
    if (session === undefined || session.internal) {
      throw new SandboxError("exec_not_found", `sandbox ${sandboxId} has no exec ${execId}`);
    }
    return session;
  }

  /** The trace context of the newest running exec that came with one. */
  traceparent(sandbox: LiveSandbox): string | undefined {
    let found: string | undefined;
    for (const session of sandbox.execs.values()) {
      if (session.request.traceparent !== undefined && session.record.state === "running") {
        found = session.request.traceparent;
      }
    }
    return found;
  }

  /** How many WebSockets `count` says follow the execs of `sandboxes`, all together. */
  socketTotal(sandboxes: Iterable<LiveSandbox>, count: (session: ExecSession) => number): number {
    let total = 0;
    for (const sandbox of sandboxes) {
      for (const session of sandbox.execs.values()) total += count(session);
    }
    return total;
  }

  private async startNow(
    sandbox: LiveSandbox,
    request: ResolvedExecRequest,
    options: ExecOptions,
  ): Promise<ExecSession> {
    const { driver, limits, environmentFor } = this.options;
    const id = sandbox.record.id;
    const session = await ExecSession.start(
      {
        sandboxId: id,
        env: (await environmentFor?.(id)) ?? {},
        start: (command) => driver.exec(id, command, { signal: sandbox.stopRequested.signal }),
      },
      request,
      {
        bufferBytes: limits.outputBufferBytes,
        budget: this.outputBudget,
        onLine: options.onLine,
        maxLineBytes: options.maxLineBytes,
        internal: options.internal,
      },
    );
    sandbox.execs.set(session.execId, session);
    forgetOldExecs(sandbox);
    return session;
  }
}

/** Forgets the oldest finished execs beyond those kept. */
function forgetOldExecs(sandbox: LiveSandbox): void {
  const finished = [...sandbox.execs.values()].filter((each) => each.exited !== undefined);
  const forgotten = finished.slice(0, Math.max(0, finished.length - finishedExecsKept));
  for (const session of forgotten) {
    sandbox.execs.delete(session.execId);
    session.output.release();
  }
}
