import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { ProcessStartError } from "../process-start-error.js";
import { sandboxUser } from "../sandbox-etc.js";
import type { ProcessCommand, ProcessExit } from "../sandbox-process.js";

/** What it takes to start a process inside one running sandbox. */
export interface SandboxEntry {
  /** The built exec helper (enter-helper.ts). */
  readonly helper: string;
  /** Host pid of the sandbox's first process, whose namespaces are entered. */
  readonly innerPid: number;
  /** Inode of that process's user namespace: a reused pid cannot pass for it. */
  readonly usernsInode: number;
  /** The sandbox's seccomp filter (seccomp/filter.ts), the one its first process has. */
  readonly filter: Uint8Array;
}

export interface EnterRequest extends ProcessCommand {
  /** The cgroup.procs files to join before anything runs (the exec's, or the sandbox's). */
  readonly cgroupProcs: readonly string[];
}

/** A process started inside a sandbox. */
export interface EnteredProcess {
  /** The helper on the host; its stdio are the command's (or the terminal's). */
  readonly child: ChildProcess;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** The command's host pid once it runs; rejects with the reason it could not start. */
  readonly started: Promise<number>;
  /** Settles when the command has ended (whatever still holds its pipes). */
  readonly exited: Promise<ProcessExit>;
  /** Resizes the terminal (terminal mode only). */
  resize(cols: number, rows: number): void;
}

/** Why a command could not start in a sandbox, with the errno the helper saw (0 if none). */
export class EnterError extends ProcessStartError {
  constructor(message: string, errno: number) {
    super(message, errno);
    this.name = "EnterError";
  }
}

/** An exec helper on its way into a sandbox (or there), waiting for what to run. */
export interface ReadyEntry {
  /** Runs the command: the helper forks into the sandbox and executes it. Once only. */
  run(command: ProcessCommand): EnteredProcess;
  /** Lets the helper go unused: it exits. */
  discard(): void;
  /** Still usable: not run, not discarded, not dead. */
  readonly usable: boolean;
}

/**
 * Starts a command inside a sandbox through the exec helper (native/cairn-enter.c): in its
 * namespaces and cgroup, as the sandbox user, with no capabilities and its seccomp filter. The
 * request goes over a pipe, never on a command line, and the helper gets no environment.
 */
export function enterSandbox(entry: SandboxEntry, request: EnterRequest): EnteredProcess {
  return prepareEntry(entry, request.cgroupProcs).run(request);
}

/**
 * Starts an exec helper that joins `cgroupProcs` and enters the sandbox's namespaces, then
 * waits for {@link ReadyEntry.run}: made ahead, it spares an exec the cost of starting a
 * process and of the kernel moving it into a cgroup (tens of ms on cgroup v1).
 */
export function prepareEntry(entry: SandboxEntry, cgroupProcs: readonly string[]): ReadyEntry {
  const child = spawn(entry.helper, [], {
    // Its own command line is readable in the sandbox between its fork and the exec: a name,
    // not the host path of the binary.
    argv0: "cairn-enter",
    env: {},
    stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"],
    // A session of its own: no controlling terminal of the runner's to inject input into.
    detached: true,
  });
  const control = child.stdio[3] as Writable;
  const statusStream = child.stdio[4] as Readable;
  // A command that does not read its stdin closes the pipe: not an error of the runner's.
  child.stdin?.on("error", () => undefined);
  control.on("error", () => undefined);
  control.write(
    message([
      "cairn-enter-2",
      String(entry.innerPid),
      String(entry.usernsInode),
      String(cgroupProcs.length),
      ...cgroupProcs,
    ]),
  );

  let settleStarted: { resolve(pid: number): void; reject(error: Error): void } | undefined;
  const started = new Promise<number>((resolve, reject) => {
    settleStarted = { resolve, reject };
  });
  // Rejections nobody awaits are handled by whoever reads `exited`.
  started.catch(() => undefined);
  let reported: ProcessExit | undefined;
  let lines = "";
  statusStream.setEncoding("utf8");
  statusStream.on("data", (text: string) => {
    lines += text;
    for (let newline = lines.indexOf("\n"); newline !== -1; newline = lines.indexOf("\n")) {
      const line = lines.slice(0, newline);
      lines = lines.slice(newline + 1);
      const [word = "", first = "", ...rest] = line.split(" ");
      if (word === "started") settleStarted?.resolve(Number(first));
      else if (word === "failed")
        settleStarted?.reject(new EnterError(rest.join(" "), Number(first)));
      else if (word === "exit") reported = { exitCode: Number(first), signal: null };
      else if (word === "signal") reported = { exitCode: null, signal: signalName(Number(first)) };
    }
  });
  // The helper's status says how the command went; it ends when the helper (and anything it
  // started before executing the command) is gone. Its process's exit may come first.
  let helperExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.once("exit", (code, signal) => {
    helperExit = { code, signal };
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    const settle = (reason: string) => {
      settleStarted?.reject(new EnterError(reason, 0));
      resolve(
        reported ?? { exitCode: helperExit?.code ?? null, signal: helperExit?.signal ?? null },
      );
    };
    child.once("error", (error) => settle(`the exec helper did not start: ${error.message}`));
    statusStream.once("close", () => {
      const how = helperExit?.signal ?? `code ${helperExit?.code ?? "unknown"}`;
      // Before "started": the helper failed (or was killed) on its way in.
      settle(`the exec helper ended (${how}) before the command started`);
    });
  });
  let taken = false;
  return {
    get usable() {
      return !taken && helperExit === undefined && child.exitCode === null;
    },
    discard() {
      if (taken) return;
      taken = true;
      control.end();
    },
    run(command) {
      if (taken) throw new Error("this exec helper was already used");
      taken = true;
      control.write(
        message(
          [
            String(sandboxUser.uid),
            String(sandboxUser.gid),
            command.cwd,
            command.terminal === undefined
              ? "0"
              : `${command.terminal.cols}x${command.terminal.rows}`,
            String(command.argv.length),
            ...command.argv,
            String(Object.keys(command.env).length),
            ...Object.entries(command.env).map(([name, value]) => `${name}=${value}`),
            String(entry.filter.byteLength),
          ],
          entry.filter,
        ),
      );
      // Terminal mode keeps the pipe for resizes; else the helper reads nothing more.
      if (command.terminal === undefined) control.end();
      return {
        child,
        stdin: child.stdin as Writable,
        stdout: child.stdout as Readable,
        stderr: child.stderr as Readable,
        started,
        exited,
        resize(cols, rows) {
          if (command.terminal !== undefined && control.writable) {
            control.write(`resize ${Math.trunc(cols)} ${Math.trunc(rows)}\n`);
          }
        },
      };
    },
  };
}

/** One message of the helper's request: "<length>\n", NUL-terminated fields, then `tail`. */
function message(fields: readonly string[], tail: Uint8Array = new Uint8Array()): Buffer {
  for (const field of fields) {
    if (field.includes("\0")) throw new Error("a field of an exec contains a NUL byte");
  }
  const body = Buffer.concat([Buffer.from(`${fields.join("\0")}\0`), tail]);
  return Buffer.concat([Buffer.from(`${body.byteLength}\n`), body]);
}

function signalName(number: number): NodeJS.Signals {
  const found = Object.entries(constants.signals).find(([, value]) => value === number);
  return (found?.[0] ?? `SIG${number}`) as NodeJS.Signals;
}
