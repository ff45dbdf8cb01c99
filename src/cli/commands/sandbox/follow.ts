import { constants } from "node:os";
import {
  defaultTerminalSize,
  maxTerminalSide,
  type TerminalSize,
} from "../../../core/wire/terminal-size.js";
import {
  ExecConnectionError,
  type ExecHandle,
  type ExecResult,
  type Sandbox,
} from "../../../sandbox/index.js";

/**
 * What happens to the local stdin: `terminal` sends keystrokes as they are typed (raw mode on
 * a terminal, so Ctrl-C reaches the remote program); `forward` sends it and closes the remote
 * stdin at its end; `close` closes the remote stdin at once; `leave` does neither.
 */
export type StdinMode = "terminal" | "forward" | "close" | "leave";

export interface FollowOptions {
  readonly sandbox: Sandbox;
  /** Attached with {@link terminalOutput}. */
  readonly handle: ExecHandle;
  readonly stdin: StdinMode;
  /** Send the local terminal's size now and whenever it changes (the exec has a pty). */
  readonly resize: boolean;
  /**
   * Ctrl-C: `forward` sends SIGINT to the remote program (a second Ctrl-C detaches);
   * `detach` leaves the program running and returns at once.
   */
  readonly interrupt: "forward" | "detach";
}

/** Output callbacks of `exec()` and `attach()` that write the exec's output here. */
export const terminalOutput = {
  onStdout: (bytes: Uint8Array) => process.stdout.write(bytes),
  onStderr: (bytes: Uint8Array) => process.stderr.write(bytes),
} as const;

/** The local terminal's size, within what the API accepts; 80×24 when there is none. */
export function terminalSize(): TerminalSize {
  const within = (value: number | undefined, fallback: number) =>
    Math.min(maxTerminalSide, Math.max(1, value || fallback));
  const { cols, rows } = defaultTerminalSize;
  return process.stdout.isTTY
    ? { cols: within(process.stdout.columns, cols), rows: within(process.stdout.rows, rows) }
    : { cols, rows };
}

/**
 * Streams an exec's output to this process's stdout and stderr until it ends, and resolves
 * with the exit code to leave with: the program's own, 128 + the signal's number when a signal
 * ended it (or ended this command, which then detaches and leaves it running).
 */
export async function followExec(options: FollowOptions): Promise<number> {
  const { sandbox, handle } = options;
  const cleanups: Array<() => void> = [];
  let detachedBy: NodeJS.Signals | undefined;
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signal === "SIGINT" && options.interrupt === "forward" && interrupts++ === 0) {
      handle.signal("SIGINT");
      process.stderr.write(
        "\ncairn sandbox: sent SIGINT to the command; Ctrl-C again detaches and leaves it running\n",
      );
      return;
    }
    detachedBy = signal;
    handle.detach();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, onSignal);
    cleanups.push(() => process.off(signal, onSignal));
  }
  try {
    forwardStdin(options.stdin, handle, cleanups);
    if (options.resize && process.stdout.isTTY) {
      const sendSize = () => {
        const { cols, rows } = terminalSize();
        handle.resize(cols, rows);
      };
      sendSize();
      process.stdout.on("resize", sendSize);
      cleanups.push(() => process.stdout.off("resize", sendSize));
    }
    const result = await handle.wait();
    if (handle.droppedBytes > 0) {
      process.stderr.write(
        `cairn sandbox: ${handle.droppedBytes} bytes of output were no longer held by the runner and are missing above\n`,
      );
    }
    return await exitCodeOf(result, options);
  } catch (error) {
    const reattach = `cairn sandbox attach ${sandbox.id} ${handle.execId} --since ${handle.offset}`;
    if (detachedBy !== undefined) {
      process.stderr.write(`\ncairn sandbox: detached; the command keeps running: ${reattach}\n`);
      return 128 + (constants.signals[detachedBy] ?? 0);
    }
    if (ExecConnectionError.isInstance(error)) {
      throw new Error(`${error.message}. The command may still be running: ${reattach}`, {
        cause: error,
      });
    }
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) cleanup();
  }
}

function forwardStdin(mode: StdinMode, handle: ExecHandle, cleanups: Array<() => void>): void {
  if (mode === "leave") return;
  if (mode === "close") {
    handle.closeStdin();
    return;
  }
  const stdin = process.stdin;
  if (mode === "terminal" && stdin.isTTY) {
    stdin.setRawMode(true);
    // The exit handler is the last resort: a terminal left raw is unusable until `reset`.
    const restore = () => stdin.setRawMode(false);
    process.once("exit", restore);
    cleanups.push(() => {
      restore();
      process.off("exit", restore);
    });
  }
  const onData = (chunk: Buffer) => handle.sendStdin(chunk);
  const onEnd = () => handle.closeStdin();
  stdin.on("data", onData);
  stdin.once("end", onEnd);
  // A stdin that cannot be read (closed, or a socket that failed) is an empty one.
  stdin.once("error", onEnd);
  cleanups.push(() => {
    stdin.off("data", onData);
    stdin.off("end", onEnd);
    stdin.off("error", onEnd);
    // Paused, a stdin still open (a terminal, a pipe nobody closes) no longer holds the process.
    stdin.pause();
  });
}

async function exitCodeOf(result: ExecResult, options: FollowOptions): Promise<number> {
  if (result.exitCode !== null) return result.exitCode;
  if (result.signal === null) return 1;
  const record = await options.sandbox.execRecord(options.handle.execId).catch(() => undefined);
  if (record?.state === "timed_out") {
    process.stderr.write("cairn sandbox: the command ran past its --timeout-ms and was killed\n");
  }
  return 128 + (constants.signals[result.signal as NodeJS.Signals] ?? 0);
}
