import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { ExecRecord, ExecSignal } from "../../../core/wire/exec-protocol.js";
import type { CgroupUsage } from "../cgroups/types.js";
import { enterSandbox, joinCgroupThenExec, spawnInCgroup } from "../launch.js";
import { sandboxUser } from "../sandbox-etc.js";
import type { ExecSessionPort } from "./exec-socket.js";
import { type OutputBudget, OutputBuffer } from "./output-buffer.js";

/** What to run in a sandbox. */
export interface ExecRequest {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Inside the sandbox; default /workspace. */
  readonly cwd: string;
  /** A terminal of this size, or pipes. */
  readonly pty: { readonly cols: number; readonly rows: number } | undefined;
  /** Killed after this long (the state says `timed_out`). */
  readonly timeoutMs: number | undefined;
}

/** Where the exec runs: the sandbox's namespaces and the exec's own cgroup. */
export interface ExecPlace {
  readonly sandboxId: string;
  /** Host pid of a process inside the sandbox, whose namespaces the exec enters. */
  readonly innerPid: number;
  readonly cgroupProcs: readonly string[];
  /** The exec's cgroup usage, for its span; undefined when cgroups are not enforced. */
  readonly usage: () => Promise<CgroupUsage | undefined>;
  /** Kills every process of the exec's cgroup, those that left its session included. */
  readonly killAll?: () => Promise<void>;
}

export type ExecState = ExecRecord["state"];

interface Pty {
  readonly pid: number;
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  kill(signal?: string): void;
  pause(): void;
  resume(): void;
  onData(listener: (data: string | Buffer) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
}

/** The environment of the host-side launcher (sh, nsenter): fixed, never the client's. */
const hostEnv = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

// Inside the sandbox: sets each variable named in CAIRN_ENV_NAMES from CAIRN_ENV_<name>, drops
// the carriers and the launcher's PATH, then becomes the command. Names are checked by the API
// (letters, digits, _), so `eval` only ever sees a name, never a value.
const restoreEnvironment = String.raw`for n in $CAIRN_ENV_NAMES; do eval "export $n=\"\${CAIRN_ENV_$n}\"; unset CAIRN_ENV_$n"; done; unset CAIRN_ENV_NAMES; exec "$@"`;

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
 * One command running in a sandbox: entered into the sandbox's namespaces with nsenter as the
 * sandbox user, in a cgroup of its own inside the sandbox's. Its output goes to a bounded
 * buffer with byte offsets that any number of WebSockets read from; it outlives them all.
 */
export class ExecSession implements ExecSessionPort {
  readonly execId = `ex_${randomBytes(12).toString("hex")}`;
  readonly output: OutputBuffer;
  readonly startedAt = new Date();
  endedAt: Date | undefined;
  exited: { exitCode: number | null; signal: string | null } | undefined;
  state: ExecState = "running";
  /** CPU seconds and peak memory of the exec's cgroup, read when it ended. */
  usage: CgroupUsage | undefined;
  private readonly exitListeners = new Set<(exit: NonNullable<ExecSession["exited"]>) => void>();
  private child: ChildProcess | undefined;
  private pty: Pty | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private endReason: ExecState | undefined;
  private pid = 0;

  private constructor(
    readonly place: ExecPlace,
    readonly request: ExecRequest,
    output: { bufferBytes?: number | undefined; budget?: OutputBudget | undefined },
  ) {
    this.output = new OutputBuffer(output.bufferBytes ?? defaultOutputBufferBytes, output.budget);
  }

  static async start(
    place: ExecPlace,
    request: ExecRequest,
    output: { bufferBytes?: number | undefined; budget?: OutputBudget | undefined } = {},
  ): Promise<ExecSession> {
    const session = new ExecSession(place, request, output);
    try {
      await session.spawn();
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

  writeStdin(bytes: Uint8Array): boolean {
    if (this.exited !== undefined) return true;
    if (this.pty !== undefined) {
      this.pty.write(Buffer.from(bytes));
      return true;
    }
    if (!this.child?.stdin?.writable) return true;
    return this.child.stdin.write(bytes);
  }

  onStdinDrain(listener: () => void): () => void {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || this.exited !== undefined) {
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
    if (this.pty !== undefined) this.pty.write("\u0004");
    else this.child?.stdin?.end();
  }

  resize(cols: number, rows: number): void {
    if (this.exited === undefined) this.pty?.resize(cols, rows);
  }

  /**
   * Sends a signal to the command and what it started (its session), not to the nsenter that
   * waits for it on the host: a command that traps SIGINT must be able to handle it and exit
   * as it chooses. SIGKILL goes to everything, nsenter included.
   */
  signal(name: ExecSignal): void {
    if (this.exited !== undefined) return;
    if (name === "SIGKILL") {
      sendSignal(-this.pid, name);
      return;
    }
    void sessionMembers(this.pid).then((pids) => {
      for (const pid of pids) sendSignal(pid, name);
    });
  }

  /** Stops it for good (SIGKILL), recording why; settles once its processes are gone. */
  async kill(reason: ExecState = "killed"): Promise<void> {
    if (this.exited !== undefined) return;
    this.endReason ??= reason;
    this.signal("SIGKILL");
    // A command that called setsid is out of the group: its cgroup still holds it.
    await this.place.killAll?.();
  }

  pause(): void {
    if (this.pty !== undefined) this.pty.pause();
    else {
      this.child?.stdout?.pause();
      this.child?.stderr?.pause();
    }
  }

  resume(): void {
    if (this.pty !== undefined) this.pty.resume();
    else {
      this.child?.stdout?.resume();
      this.child?.stderr?.resume();
    }
  }

  private async spawn(): Promise<void> {
    const { cmd, args, cwd, pty } = this.request;
    const env = {
      ...defaultEnv,
      ...(pty === undefined ? {} : { TERM: "xterm-256color" }),
      ...this.request.env,
    };
    // The host's sh and nsenter run as root: they must never see a client's PATH or
    // LD_PRELOAD, which could point at a file the sandbox wrote. So the client's variables
    // cross under a prefix no program reads, and a shell inside the sandbox names them back.
    // Not on a command line either: host users can read every process's arguments.
    const carried: Record<string, string> = { CAIRN_ENV_NAMES: Object.keys(env).join(" ") };
    for (const [name, value] of Object.entries(env)) carried[`CAIRN_ENV_${name}`] = value;
    const command = enterSandbox(this.place.innerPid, cwd, [
      "/bin/sh",
      "-c",
      restoreEnvironment,
      "cairn-exec",
      cmd,
      ...args,
    ]);
    const launchEnv = { ...hostEnv, ...carried };
    if (pty !== undefined) {
      await this.spawnPty(command, launchEnv, pty);
    } else {
      const child = spawnInCgroup(this.place.cgroupProcs, command, {
        env: launchEnv,
        stdio: ["pipe", "pipe", "pipe"],
      });
      this.child = child;
      this.pid = child.pid ?? 0;
      child.stdout?.on("data", (chunk: Buffer) => this.output.append(1, chunk));
      child.stderr?.on("data", (chunk: Buffer) => this.output.append(2, chunk));
      // A command that does not read its stdin closes the pipe: not an error of the runner's.
      child.stdin?.on("error", () => undefined);
      child.once("error", (error) => {
        this.output.append(
          2,
          Buffer.from(`cairn: could not start the command: ${error.message}\n`),
        );
        this.finish(null, null, "failed");
      });
      // 'close' comes once every byte of stdout and stderr is read. A background process the
      // command left behind may hold the pipes open for ever, so the exec also ends shortly
      // after the command itself exits, with what its pipes gave until then.
      child.once("close", (code, signal) => this.finish(code, signal, undefined));
      child.once("exit", (code, signal) => {
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          this.finish(code, signal, undefined);
        }, exitGraceMs).unref();
      });
    }
    if (this.request.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        // The sandbox's own stop kills whatever this could not.
        this.kill("timed_out").catch(() => undefined);
      }, this.request.timeoutMs);
      this.timer.unref();
    }
  }

  private async spawnPty(
    command: readonly string[],
    launchEnv: Record<string, string>,
    size: { cols: number; rows: number },
  ): Promise<void> {
    // node-pty is native: loaded only when a terminal is asked for.
    const { spawn } = await import("node-pty");
    const pty = spawn("/bin/sh", ["-c", joinCgroupThenExec, "cairn-launch", ...command], {
      name: "xterm-256color",
      cols: size.cols,
      rows: size.rows,
      env: { ...launchEnv, CAIRN_CGROUP_PROCS: this.place.cgroupProcs.join(" ") },
      encoding: null,
    }) as unknown as Pty;
    this.pty = pty;
    this.pid = pty.pid;
    pty.onData((data) =>
      this.output.append(1, typeof data === "string" ? Buffer.from(data) : data),
    );
    pty.onExit(({ exitCode, signal }) =>
      this.finish(signal ? null : exitCode, signal ? signalName(signal) : null, undefined),
    );
  }

  private finish(code: number | null, signal: string | null, reason: ExecState | undefined): void {
    if (this.exited !== undefined) return;
    clearTimeout(this.timer);
    this.endedAt = new Date();
    this.state = reason ?? this.endReason ?? (signal === "SIGKILL" ? "killed" : "exited");
    const exit = { exitCode: code, signal };
    void this.place
      .usage()
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

function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Host pids of the processes in the session `leader` leads, the leader left out. */
async function sessionMembers(leader: number): Promise<number[]> {
  const members: number[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || Number(entry) === leader) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid pgrp session …: comm may hold spaces, so read after its ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[3]) === leader) members.push(Number(entry));
  }
  return members;
}

function signalName(number: number): string {
  const names: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM" };
  return names[number] ?? `signal ${number}`;
}
