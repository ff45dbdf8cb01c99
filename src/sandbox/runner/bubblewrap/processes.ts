import { readdir, readFile } from "node:fs/promises";
import { PassThrough, Writable } from "node:stream";
import type { ExecSignal } from "../../../core/wire/exec-protocol.js";
import type { ProcessStartError } from "../process-start-error.js";
import type { ExecProcess, SandboxProcess } from "../sandbox-process.js";
import type { SandboxCgroup } from "./cgroups/types.js";
import type { EnteredProcess } from "./enter.js";

/** A process the exec helper started in a sandbox, as the runner sees any driver's. */
export function sandboxProcess(entered: EnteredProcess): SandboxProcess {
  const started = entered.started.then(() => undefined);
  // Whoever needs it awaits it; a file read that never does must not be an unhandled rejection.
  started.catch(() => undefined);
  return {
    stdin: entered.stdin,
    stdout: entered.stdout,
    stderr: entered.stderr,
    started,
    exited: entered.exited,
    closed: new Promise((resolve) => entered.child.once("close", () => resolve())),
  };
}

/**
 * An exec: the process, and its own cgroup (`cgroup`, undefined where cgroups are not used),
 * which holds every process it starts, those that leave its session too.
 */
export function execProcess(
  entered: EnteredProcess,
  cgroup: SandboxCgroup | undefined,
): ExecProcess {
  // Host pid of the command (it leads its own session and process group) once it runs.
  const leader = entered.started.then(
    (pid) => pid,
    () => undefined,
  );
  return {
    ...sandboxProcess(entered),
    resize: (cols, rows) => entered.resize(cols, rows),
    async signal(names: readonly ExecSignal[]) {
      const pid = await leader;
      if (pid === undefined) return;
      if (names.includes("SIGKILL")) sendSignal(-pid, "SIGKILL");
      const others = names.filter((name) => name !== "SIGKILL");
      if (others.length === 0) return;
      // The exec's own processes: its cgroup's (not the helper, which waits outside the
      // sandbox), else the members of its session, found by reading the host's /proc.
      const helper = entered.child.pid;
      const targets =
        cgroup === undefined
          ? await sessionMembers(pid)
          : (await cgroup.processes().catch(() => [pid])).filter((each) => each !== helper);
      for (const name of others) for (const target of targets) sendSignal(target, name);
    },
    killAll: async () => cgroup?.killAll(),
    async usage() {
      const usage = await cgroup?.usage();
      // Its cgroup goes once it is empty (hundreds of execs must not leave hundreds of
      // cgroups); background processes it started keep theirs until the sandbox stops.
      if (usage !== undefined && usage.pids === 0) await cgroup?.destroy().catch(() => undefined);
      return usage;
    },
  };
}

/** A process that never starts: asked of a sandbox that is gone. */
export function notStarted(error: ProcessStartError): SandboxProcess {
  const started = Promise.reject(error);
  started.catch(() => undefined);
  const ended = (stream: PassThrough) => {
    stream.end();
    return stream;
  };
  return {
    stdin: new Writable({ write: (_chunk, _encoding, done) => done() }),
    stdout: ended(new PassThrough()),
    stderr: ended(new PassThrough()),
    started,
    exited: Promise.resolve({ exitCode: null, signal: null }),
    closed: Promise.resolve(),
  };
}

function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Host pids of the processes in the session `leader` leads, the leader first. */
async function sessionMembers(leader: number): Promise<number[]> {
  const members: number[] = [leader];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || Number(entry) === leader) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid pgrp session …: comm may hold spaces, so read after its ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[3]) === leader) members.push(Number(entry));
  }
  return members;
}
