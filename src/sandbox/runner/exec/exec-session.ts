import { newExecId } from "../../../core/ids.js";
import type { ExecRecord, ExecSignal } from "../../../core/wire/exec-protocol.js";
import type { ResolvedExecRequest } from "../../../core/wire/exec-request.js";
import { ProcessStartError } from "../process-start-error.js";
import { sandboxUser } from "../sandbox-etc.js";
import type { ExecProcess, ProcessCommand, ProcessUsage } from "../sandbox-process.js";
import { defaultMaxLineBytes, type ExecStream, LineSplitter } from "./exec-lines.js";
import type { ExecSessionPort } from "./exec-socket.js";
import { type OutputBudget, OutputBuffer } from "./output-buffer.js";
import { SignalBatcher } from "./signal-batcher.js";

/** Where the exec runs: its sandbox, and how a command starts there (its driver's exec). */
export interface ExecPlace {
  readonly sandboxId: string;
  /** The sandbox's own variables (secret placeholders, proxy), under the exec's. */
  readonly env?: Readonly<Record<string, string>>;
  readonly start: (command: ProcessCommand) => Promise<ExecProcess>;
}

export type ExecState = ExecRecord["state"];

/** Where an exec's output goes, and what an internal caller asked (runner.ts `ExecOptions`). */
export interface ExecOutputOptions {
  readonly bufferBytes?: number | undefined;
  readonly budget?: OutputBudget | undefined;
  readonly onLine?: ((stream: ExecStream, line: string) => void) | undefined;
  readonly maxLineBytes?: number | undefined;
  readonly internal?: boolean | undefined;
}

const defaultEnv = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: sandboxUser.home,
  USER: sandboxUser.name,
  LOGNAME: sandboxUser.name,
  LANG: "C.UTF-8",
};

/** How long output is still read after the command exits, for its last bytes in the pipes. */
const exitGraceMs = 100;

/** Default size of the output kept per exec for re-attach: 4 MiB. */
export const defaultOutputBufferBytes = 4 * 1024 * 1024;

/**
 * One command running in a sandbox, started by its driver (driver.ts) as the sandbox user, with
 * usage of its own. Its output goes to a bounded buffer with byte offsets that any number of
 * WebSockets read from; it outlives them all.
 */
export class ExecSession implements ExecSessionPort {
  readonly execId = newExecId();
  readonly output: OutputBuffer;
  readonly startedAt = new Date();
  endedAt: Date | undefined;
  exited: { exitCode: number | null; signal: string | null } | undefined;
  state: ExecState = "running";
  /** CPU seconds and peak memory of the exec, read when it ended. */
  usage: ProcessUsage | undefined;
  private readonly exitListeners = new Set<(exit: NonNullable<ExecSession["exited"]>) => void>();
  private process: ExecProcess | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private endReason: ExecState | undefined;

  /** Lines of its output to an internal caller (the agents service), when it asked. */
  private readonly lines: LineSplitter | undefined;
  /** Started by the service for itself: the API neither lists nor attaches it. */
  readonly internal: boolean;

  private constructor(
    readonly place: ExecPlace,
    readonly request: ResolvedExecRequest,
    output: ExecOutputOptions,
  ) {
    this.output = new OutputBuffer(output.bufferBytes ?? defaultOutputBufferBytes, output.budget);
    this.lines =
      output.onLine === undefined
        ? undefined
        : new LineSplitter(output.onLine, output.maxLineBytes ?? defaultMaxLineBytes);
    this.internal = output.internal === true;
  }

  /**
   * Starts the command. One that cannot run (no such program, a bad cwd) ends as `failed`,
   * with the reason on its stderr, a moment later.
   */
  static async start(
    place: ExecPlace,
    request: ResolvedExecRequest,
    output: ExecOutputOptions = {},
  ): Promise<ExecSession> {
    const session = new ExecSession(place, request, output);
    try {
      session.follow(await place.start(session.command()));
    } catch (error) {
      session.output.release();
      throw error;
    }
    return session;
  }

  get record(): ExecRecord {
    return {
      execId: this.execId,
      sandboxId: this.place.sandboxId,
      cmd: this.request.cmd,
      args: [...this.request.args],
      cwd: this.request.cwd,
      pty: this.request.pty !== undefined,
      state: this.state,
      exitCode: this.exited?.exitCode ?? null,
      signal: this.exited?.signal ?? null,
      startedAt: this.startedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
      outputBytes: this.output.end,
      bufferStart: this.output.start,
      cpuSeconds: this.usage?.cpuSeconds ?? null,
      memoryPeakBytes: this.usage?.memoryPeakBytes ?? null,
    };
  }

  onExit(listener: (exit: NonNullable<ExecSession["exited"]>) => void): () => void {
    if (this.exited !== undefined) {
      listener(this.exited);
      return () => undefined;
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** Settles when the command has exited. */
  wait(): Promise<NonNullable<ExecSession["exited"]>> {
    return new Promise((resolve) => this.onExit(resolve));
  }

  /**
   * Writes to the command's stdin and resolves once its pipe has taken the bytes in (at once,
   * or after it drained): for an internal caller that feeds a long-lived process (the agent
   * core's JSON lines). False when the command no longer takes input (it exited, or closed
   * its stdin); the bytes are then dropped.
   */
  async write(data: string | Uint8Array): Promise<boolean> {
    const stdin = this.process?.stdin;
    if (this.exited !== undefined || stdin === undefined || !stdin.writable) return false;
    if (stdin.write(data)) return true;
    await new Promise<void>((resolve) => this.onStdinDrain(resolve));
    return stdin.writable && !stdin.destroyed;
  }

  writeStdin(bytes: Uint8Array): boolean {
    const stdin = this.process?.stdin;
    if (this.exited !== undefined || stdin === undefined || !stdin.writable) return true;
    return stdin.write(bytes);
  }

  onStdinDrain(listener: () => void): () => void {
    const stdin = this.process?.stdin;
    if (stdin === undefined || this.exited !== undefined) {
      queueMicrotask(listener);
      return () => undefined;
    }
    // Drained, or gone (the command closed its stdin or exited): read from the client again.
    const done = () => {
      stdin.off("drain", done);
      stdin.off("close", done);
      listener();
    };
    stdin.once("drain", done);
    stdin.once("close", done);
    return () => {
      stdin.off("drain", done);
      stdin.off("close", done);
    };
  }

  closeStdin(): void {
    // A terminal's end of input is its EOF character; a pipe's is its end.
    if (this.request.pty !== undefined) this.process?.stdin.write("\u0004");
    else this.process?.stdin.end();
  }

  resize(cols: number, rows: number): void {
    if (this.exited === undefined) this.process?.resize(cols, rows);
  }

  /**
   * Sends a signal to the command and what it started (its session), which may trap it and
   * exit as it chooses. SIGKILL goes to every process of the exec, escapees of its session too.
   */
  signal(name: ExecSignal): void {
    this.signals.add(name);
  }

  /** However many signals arrive at once, one look for the processes per batch of them. */
  private readonly signals = new SignalBatcher(async (names) => {
    const running = this.process;
    await running?.started.catch(() => undefined);
    if (this.exited !== undefined || running === undefined) return;
    await running.signal(names);
  });

  /** Stops it for good (SIGKILL), recording why; settles once its processes are gone. */
  async kill(reason: ExecState = "killed"): Promise<void> {
    if (this.exited !== undefined) return;
    this.endReason ??= reason;
    this.signal("SIGKILL");
    // A command that called setsid is out of the group: its driver still finds it.
    await this.process?.killAll();
  }

  pause(): void {
    this.process?.stdout.pause();
    this.process?.stderr.pause();
  }

  resume(): void {
    this.process?.stdout.resume();
    this.process?.stderr.resume();
  }

  /** What the driver runs: the request, with the sandbox's variables under the request's. */
  private command(): ProcessCommand {
    const { cmd, args, cwd, pty } = this.request;
    return {
      cwd,
      argv: [cmd, ...args],
      env: {
        ...defaultEnv,
        ...this.place.env,
        ...(pty === undefined ? {} : { TERM: "xterm-256color" }),
        ...this.request.env,
      },
      terminal: pty,
    };
  }

  /** Reads the started command's output and waits for its end. */
  private follow(entered: ExecProcess): void {
    this.process = entered;
    entered.stdout.on("data", (chunk: Buffer) => this.emit(1, chunk));
    entered.stderr.on("data", (chunk: Buffer) => this.emit(2, chunk));
    // 'close' comes once every byte of stdout and stderr is read. A background process the
    // command left behind may hold the pipes open for ever, so the exec also ends shortly
    // after the command itself exits, with what its pipes gave until then.
    let closed = false;
    void entered.closed.then(() => {
      closed = true;
      void entered.exited.then((exit) => this.finish(exit.exitCode, exit.signal));
    });
    void entered.exited.then((exit) => {
      if (closed) return;
      setTimeout(() => {
        entered.stdout.destroy();
        entered.stderr.destroy();
        this.finish(exit.exitCode, exit.signal);
      }, exitGraceMs).unref();
    });
    void entered.started.catch((error: unknown) => {
      // The command could not run (no such program, a bad cwd, a sandbox that just
      // stopped): the exec exists, ends as failed, and says why on its stderr.
      const message = error instanceof ProcessStartError ? error.message : String(error);
      this.endReason = "failed";
      this.emit(2, Buffer.from(`cairn: could not start the command: ${message}\n`));
    });
    if (this.request.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        // The sandbox's own stop kills whatever this could not.
        this.kill("timed_out").catch(() => undefined);
      }, this.request.timeoutMs);
      this.timer.unref();
    }
  }

  private emit(channel: 1 | 2, bytes: Buffer): void {
    this.lines?.write(channel, bytes);
    this.output.append(channel, bytes);
  }

  private finish(code: number | null, signal: string | null): void {
    if (this.exited !== undefined || this.state !== "running") return;
    clearTimeout(this.timer);
    this.lines?.end();
    this.endedAt = new Date();
    this.state = this.endReason ?? (signal === "SIGKILL" ? "killed" : "exited");
    const exit = { exitCode: code, signal };
    void (this.process?.usage() ?? Promise.resolve(undefined))
      .then((usage) => {
        this.usage = usage;
      })
      .catch(() => undefined)
      .finally(() => {
        this.exited = exit;
        for (const listener of this.exitListeners) listener(exit);
        this.exitListeners.clear();
      });
  }
}
