import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { sandboxEtcFiles, sandboxUser } from "../sandbox-etc.js";
import type { SandboxMount } from "../sandbox-spec.js";
import type { RunnerTemplate } from "../templates.js";

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
  /** The built launch helper (native/cairn-launch.c): bwrap's parent, for as long as it runs. */
  readonly launcher: string;
  readonly template: RunnerTemplate;
  /** The host directory bound read-write at /workspace. */
  readonly workspace: string;
  /** The unprivileged host uid the sandbox runs as (when the runner is root). */
  readonly hostUid: number | undefined;
  /** Files the launcher writes its pid to, to join the sandbox's cgroup before bwrap starts. */
  readonly cgroupProcs: readonly string[];
  /** Size of the private /tmp, a tmpfs (it counts as the sandbox's memory). */
  readonly tmpSizeMB: number;
  /** The seccomp filter of every process in the sandbox (seccomp/filter.ts). */
  readonly filter: Uint8Array;
  /** Files of /etc beyond the base ones (the egress CA bundle), by path under /etc. */
  readonly etcFiles?: Readonly<Record<string, string>> | undefined;
  /** Host paths bound read-only under /opt/cairn (checked: mounts.ts). */
  readonly mounts?: readonly SandboxMount[] | undefined;
}

/** The files of /etc a sandbox gets from bytes: none for a root filesystem image (its own). */
function etcFilesOf(spec: LaunchSpec): Readonly<Record<string, string>> {
  if (spec.template.root.kind === "rootfs") return {};
  return { ...sandboxEtcFiles, ...spec.etcFiles };
}

export interface LaunchedSandbox {
  /** The launch helper on the host, bwrap's parent: it exits as bwrap did, once all is gone. */
  readonly process: ChildProcess;
  /** Host pid of the sandbox's first process (its pid 1): execs enter its namespaces. */
  readonly innerPid: number;
  /** Inode of that process's user namespace, which identifies the sandbox. */
  readonly usernsInode: number;
  /** Settles when bwrap exits: the sandbox is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines bwrap wrote to stderr, for a failure's reason. */
  readonly errors: () => string;
}

// Runs as root on the host: joins the cgroup(s) named in CAIRN_CGROUP_PROCS, so that everything
// the command starts is accounted and limited from its first instruction, then becomes it.
const joinCgroupThenExec =
  'for f in $CAIRN_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; unset CAIRN_CGROUP_PROCS; exec "$@"';

/** The file descriptors bwrap gets from the runner. */
const fds = { info: 3, args: 4, seccomp: 5, firstData: 6 } as const;

/** Size of /dev/shm, a tmpfs that counts as the sandbox's memory, at most. */
const shmMaxMB = 64;

/**
 * Files and folders of /proc that say something of the host (its keyrings, kernel config and
 * symbols, timers, devices): masked as Docker masks them, where this kernel has them.
 */
const maskedProcFiles = [
  "keys",
  "key-users",
  "config.gz",
  "kcore",
  "kallsyms",
  "kmsg",
  "latency_stats",
  "timer_list",
  "timer_stats",
  "sched_debug",
  "sysrq-trigger",
];
const maskedProcFolders = ["acpi", "asound", "scsi", "driver", "fs"];

/**
 * The bwrap arguments of a sandbox: fresh namespaces, no capabilities, read-only root, /etc
 * from the runner's bytes, /proc's host details masked. They reach bwrap on a pipe (--args),
 * so that /proc/1/cmdline in the sandbox says only "bwrap --args 4 -- /usr/bin/sleep infinity".
 */
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
    "--seccomp",
    String(fds.seccomp),
  ];
  if (spec.bwrap.disableUserns) args.push("--disable-userns");
  args.push(...rootArguments(spec), "--proc", "/proc", "--dev", "/dev");
  for (const name of maskedProcFiles) {
    if (existsSync(`/proc/${name}`)) args.push("--ro-bind", "/dev/null", `/proc/${name}`);
  }
  for (const name of maskedProcFolders) {
    if (isFolder(`/proc/${name}`)) {
      args.push(...sized(spec, 4096), "--tmpfs", `/proc/${name}`, "--remount-ro", `/proc/${name}`);
    }
  }
  args.push(...sized(spec, Math.min(spec.tmpSizeMB, shmMaxMB) * mebibyte), "--tmpfs", "/dev/shm");
  args.push(...sized(spec, spec.tmpSizeMB * mebibyte), "--tmpfs", "/tmp");
  args.push("--bind", spec.workspace, "/workspace", "--chdir", "/workspace");
  for (const mount of spec.mounts ?? []) args.push("--ro-bind", mount.hostPath, mount.sandboxPath);
  // Nothing else is writable: not the root, not /dev.
  args.push("--remount-ro", "/dev", "--remount-ro", "/");
  args.push("--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin");
  args.push("--setenv", "HOME", sandboxUser.home, "--info-fd", String(fds.info));
  return args;
}

const mebibyte = 1024 * 1024;

/** `--size` for the next tmpfs, where bwrap has it. */
function sized(spec: LaunchSpec, bytes: number): string[] {
  return spec.bwrap.tmpfsSize ? ["--size", String(bytes)] : [];
}

function rootArguments(spec: LaunchSpec): string[] {
  if (spec.template.root.kind === "rootfs") {
    // Each top-level entry on its own over an empty root, so that the mount points bwrap needs
    // (/proc, /dev, /tmp, /workspace) can be made even though the image is read-only.
    const root = spec.template.root.path;
    if ((spec.mounts ?? []).length === 0 || !isFolder(join(root, "opt"))) {
      return topLevel(root, ["proc", "dev", "tmp", "workspace"]);
    }
    // The image's /opt read-only would leave no way to make /opt/cairn for the mounts: its
    // entries go one by one over a fresh /opt instead, as the root's do.
    return [
      ...topLevel(root, ["proc", "dev", "tmp", "workspace", "opt"]),
      ...topLevel(join(root, "opt"), ["cairn"], undefined, "/opt"),
    ];
  }
  const args = [
    "--ro-bind",
    "/usr",
    "/usr",
    ...topLevel("/", [], ["bin", "lib", "lib32", "lib64", "libx32", "sbin"]),
  ];
  Object.keys(etcFilesOf(spec)).forEach((name, index) => {
    args.push("--ro-bind-data", String(fds.firstData + index), `/etc/${name}`);
  });
  // The dynamic linker's cache and the alternatives that /usr/bin links through (awk, editor…).
  for (const path of ["/etc/ld.so.cache", "/etc/alternatives"]) {
    if (exists(path)) args.push("--ro-bind", path, path);
  }
  return args;
}

/** Binds (read-only) or links the entries of `root` at the top of the sandbox (or `under`). */
function topLevel(
  root: string,
  skip: readonly string[],
  only?: readonly string[],
  under = "",
): string[] {
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
    if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(path), `${under}/${name}`);
    else args.push("--ro-bind", path, `${under}/${name}`);
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

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const keeper = "/usr/bin/sleep";

/**
 * Starts a sandbox: bwrap, as the sandbox's host uid, in its cgroup, running `sleep infinity`,
 * under the launch helper. bwrap's --die-with-parent leaves a gap: the sandbox's pid 1 sets its
 * parent-death signal only once the sandbox is made, so a runner killed while a sandbox starts
 * would leave that pid 1 and its command running, children of init. The helper is bwrap's
 * parent and a child subreaper, and learns of the runner's end from its stdin, a pipe the
 * kernel closes however the runner ends: it then kills bwrap and every process orphaned below
 * it.
 */
export function launchSandbox(spec: LaunchSpec): Promise<LaunchedSandbox> {
  const dropPrivileges =
    spec.hostUid === undefined
      ? []
      : ["setpriv", `--reuid=${spec.hostUid}`, `--regid=${spec.hostUid}`, "--clear-groups", "--"];
  const etcData = Object.values(etcFilesOf(spec));
  const child = spawn(
    spec.launcher,
    [
      "/bin/sh",
      "-c",
      joinCgroupThenExec,
      "cairn-launch",
      ...dropPrivileges,
      spec.bwrap.path,
      "--args",
      String(fds.args),
      "--",
      keeper,
      "infinity",
    ],
    {
      argv0: "cairn-launch",
      env: {
        PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
        CAIRN_CGROUP_PROCS: spec.cgroupProcs.join(" "),
      },
      stdio: [
        // Never written to nor ended: its end is the runner's (cairn-launch.c).
        "pipe",
        "ignore",
        "pipe",
        "pipe",
        "pipe",
        "pipe",
        ...etcData.map(() => "pipe" as const),
      ],
      // A session of its own: no controlling terminal of the runner's to inject input into.
      detached: true,
    },
  );
  child.stdin?.on("error", () => undefined);
  const feeds: Array<[number, Uint8Array | string]> = [
    [fds.args, `${bwrapArguments(spec).join("\0")}\0`],
    [fds.seccomp, spec.filter],
    ...etcData.map((content, index): [number, string] => [fds.firstData + index, content]),
  ];
  for (const [fd, data] of feeds) {
    const stream = child.stdio[fd] as Writable | null;
    stream?.on("error", () => undefined);
    stream?.end(data);
  }
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
    const infoStream = child.stdio[fds.info] as Readable | null;
    infoStream?.setEncoding("utf8");
    infoStream?.on("data", (text: string) => {
      info += text;
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (match && !settled) {
        settled = true;
        // bwrap reports the pid before its child has finished setting up (uid map, mounts):
        // an exec entering now could find the sandbox half made. Its command running means done.
        // Execs enter the namespaces of bwrap's child, the sandbox's pid 1: a process of the
        // sandbox's own cannot kill it (its pid stays the sandbox's for as long as it lives).
        const innerPid = Number(match[1]);
        void commandStarted(innerPid, keeper)
          .then(async () => {
            const { ino } = await stat(`/proc/${innerPid}/ns/user`);
            resolve({
              process: child,
              innerPid,
              usernsInode: ino,
              exited,
              errors: () => errors.trim(),
            });
          })
          .catch(reject);
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

/**
 * The host pid of the process under `pid` (or `pid` itself) that runs `command`, once it runs
 * (polling /proc); rejects after 10 s.
 */
async function commandStarted(pid: number, command: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (let wait = 0.5; Date.now() < deadline; wait = Math.min(wait * 2, 2)) {
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
    for (const child of children.split(" ").filter((each) => each.trim() !== "")) {
      const line = await readFile(`/proc/${child.trim()}/cmdline`, "utf8").catch(() => "");
      if (line.startsWith(`${command}\0`)) return Number(child.trim());
    }
    // The pid itself may be the one that runs the command (bwrap without its own init).
    const own = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (own.startsWith(`${command}\0`)) return pid;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  throw new Error(`the sandbox did not start ${command} within 10 s`);
}
