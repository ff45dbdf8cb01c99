import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sandboxUser } from "./sandbox-etc.js";
import type { RunnerTemplate } from "./templates.js";

/** What the runner knows of the installed bubblewrap. */
export interface BwrapInfo {
  readonly path: string;
  /** `--disable-userns` (0.8.0 and later): no nested user namespaces in the sandbox. */
  readonly disableUserns: boolean;
  /** `--size` for a tmpfs. */
  readonly tmpfsSize: boolean;
}

export interface LaunchSpec {
  readonly bwrap: BwrapInfo;
  readonly template: RunnerTemplate;
  /** The host directory bound read-write at /workspace. */
  readonly workspace: string;
  /** The runner's /etc folder (sandbox-etc.ts), for `base`-rooted templates. */
  readonly etcFolder: string;
  /** The unprivileged host uid the sandbox runs as (when the runner is root). */
  readonly hostUid: number | undefined;
  /** Files the launcher writes its pid to, to join the sandbox's cgroup before bwrap starts. */
  readonly cgroupProcs: readonly string[];
  /** Size of the private /tmp, a tmpfs (it counts as the sandbox's memory). */
  readonly tmpSizeMB: number;
}

export interface LaunchedSandbox {
  /** The bwrap process on the host. */
  readonly process: ChildProcess;
  /** Host pid of the sandbox's first process: execs enter its namespaces. */
  readonly innerPid: number;
  /** Settles when bwrap exits: the sandbox is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines bwrap wrote to stderr, for a failure's reason. */
  readonly errors: () => string;
}

// Runs as root on the host: joins the cgroup(s) named in CAIRN_CGROUP_PROCS, so that everything
// the command starts is accounted and limited from its first instruction, then becomes it.
export const joinCgroupThenExec =
  'for f in $CAIRN_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; unset CAIRN_CGROUP_PROCS; exec "$@"';

/** Spawns `command` inside the given cgroup, with exactly `env` (and no host environment). */
export function spawnInCgroup(
  cgroupProcs: readonly string[],
  command: readonly string[],
  options: { env: Record<string, string>; stdio: ("pipe" | "ignore")[] },
): ChildProcess {
  return spawn("/bin/sh", ["-c", joinCgroupThenExec, "cairn-launch", ...command], {
    env: { ...options.env, CAIRN_CGROUP_PROCS: cgroupProcs.join(" ") },
    stdio: options.stdio,
    // A session of its own: no controlling terminal of the runner's to inject input into.
    detached: true,
  });
}

/** The bwrap arguments of a sandbox: fresh namespaces, no capabilities, read-only root. */
export function bwrapArguments(spec: LaunchSpec): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup",
    "--uid",
    String(sandboxUser.uid),
    "--gid",
    String(sandboxUser.gid),
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
  ];
  if (spec.bwrap.disableUserns) args.push("--disable-userns");
  args.push(...rootArguments(spec), "--proc", "/proc", "--dev", "/dev");
  if (spec.bwrap.tmpfsSize) args.push("--size", String(spec.tmpSizeMB * 1024 * 1024));
  args.push("--tmpfs", "/tmp", "--bind", spec.workspace, "/workspace", "--chdir", "/workspace");
  args.push("--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin");
  args.push("--setenv", "HOME", sandboxUser.home, "--info-fd", "3");
  return args;
}

function rootArguments(spec: LaunchSpec): string[] {
  if (spec.template.root.kind === "rootfs") {
    // Each top-level entry on its own over an empty root, so that the mount points bwrap needs
    // (/proc, /dev, /tmp, /workspace) can be made even though the image is read-only.
    return topLevel(spec.template.root.path, ["proc", "dev", "tmp", "workspace"]);
  }
  const args = [
    "--ro-bind",
    "/usr",
    "/usr",
    ...topLevel("/", [], ["bin", "lib", "lib32", "lib64", "libx32", "sbin"]),
  ];
  for (const name of ["passwd", "group", "hostname", "hosts", "nsswitch.conf"]) {
    args.push("--ro-bind", join(spec.etcFolder, name), `/etc/${name}`);
  }
  // The dynamic linker's cache and the alternatives that /usr/bin links through (awk, editor…).
  for (const path of ["/etc/ld.so.cache", "/etc/alternatives"]) {
    if (exists(path)) args.push("--ro-bind", path, path);
  }
  return args;
}

/** Binds (read-only) or links the entries of `root` at the top of the sandbox. */
function topLevel(root: string, skip: readonly string[], only?: readonly string[]): string[] {
  const args: string[] = [];
  const names = only ?? readdirSync(root);
  for (const name of names) {
    if (skip.includes(name)) continue;
    const path = join(root, name);
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(path), `/${name}`);
    else args.push("--ro-bind", path, `/${name}`);
  }
  return args;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Starts a sandbox: bwrap, as the sandbox's host uid, in its cgroup, running `sleep infinity`. */
export function launchSandbox(spec: LaunchSpec): Promise<LaunchedSandbox> {
  const dropPrivileges =
    spec.hostUid === undefined
      ? []
      : ["setpriv", `--reuid=${spec.hostUid}`, `--regid=${spec.hostUid}`, "--clear-groups", "--"];
  const command = [
    ...dropPrivileges,
    spec.bwrap.path,
    ...bwrapArguments(spec),
    "--",
    "/usr/bin/sleep",
    "infinity",
  ];
  const child = spawnInCgroup(spec.cgroupProcs, command, {
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    let info = "";
    let settled = false;
    let errors = "";
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      errors = (errors + text).slice(-4000);
    });
    const infoStream = child.stdio[3] as NodeJS.ReadableStream | null;
    infoStream?.setEncoding("utf8");
    infoStream?.on("data", (text: string) => {
      info += text;
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (match && !settled) {
        settled = true;
        const innerPid = Number(match[1]);
        // bwrap reports the pid before its child has finished setting up (uid map, mounts):
        // an exec entering now could find the sandbox half made. Its command running means done.
        void commandStarted(innerPid, "/usr/bin/sleep").then(
          () => resolve({ process: child, innerPid, exited, errors: () => errors.trim() }),
          reject,
        );
      }
    });
    child.once("error", reject);
    void exited.then(({ code, signal }) =>
      reject(
        new Error(
          `bubblewrap exited (${signal ?? `code ${code}`}) before the sandbox started: ${errors.trim() || "no message"}`,
        ),
      ),
    );
  });
}

/** Resolves once a child of `pid` runs `command` (polling /proc), or rejects after 10 s. */
async function commandStarted(pid: number, command: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let wait = 0.5; Date.now() < deadline; wait = Math.min(wait * 2, 2)) {
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
    for (const child of children.split(" ").filter((each) => each.trim() !== "")) {
      const line = await readFile(`/proc/${child.trim()}/cmdline`, "utf8").catch(() => "");
      if (line.startsWith(`${command}\0`)) return;
    }
    // The pid itself may be the one that runs the command (bwrap without its own init).
    const own = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (own.startsWith(`${command}\0`)) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  throw new Error(`the sandbox did not start ${command} within 10 s`);
}

/**
 * The command line that runs `command` inside the sandbox whose process is `innerPid`: every
 * namespace of it entered, as the sandbox user, in `cwd` (resolved inside the sandbox).
 */
export function enterSandbox(innerPid: number, cwd: string, command: readonly string[]): string[] {
  return [
    "nsenter",
    `--target=${innerPid}`,
    "--user",
    "--mount",
    "--pid",
    "--net",
    "--ipc",
    "--uts",
    "--cgroup",
    `--setuid=${sandboxUser.uid}`,
    `--setgid=${sandboxUser.gid}`,
    `--wdns=${cwd}`,
    "--",
    ...command,
  ];
}
