import { readdir, readFile, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { SandboxError } from "../../../core/errors/index.js";
import { log } from "../../../core/logger.js";
import { listProcesses } from "./cgroups/kill-processes.js";
import type { CgroupDriver } from "./cgroups/types.js";
import { hostCommand } from "./host-command.js";

const run = hostCommand;
/** The host tools run with a fixed PATH, never the caller's. */
const toolEnv = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

/** The prefix of every runner's runtime folder, under the system's temporary folder. */
export const runtimeFolderPrefix = "cairn-";

/**
 * Removes whatever an earlier run left, however it ended (closed, killed with -9, killed between
 * two steps of a stop): thaws, kills and removes the runner's cgroups; unmounts the workspaces,
 * detaches their loop devices and deletes their images, in the runner's own runtime folder and
 * in those of other runners whose process is gone. Kept workspaces (an agent's) are only
 * unmounted: their images and folders live outside the runtime folder, and nothing is deleted
 * through a mount that could not be removed. Throws a SandboxError that lists what could
 * not be removed, so that the service can say so rather than run sandboxes over the debris.
 */
export async function recoverRunner(options: {
  readonly runtimeDir: string;
  readonly cgroups: CgroupDriver | undefined;
}): Promise<void> {
  const problems: string[] = [];
  await options.cgroups?.removeStale().catch((error: unknown) => {
    problems.push(`the cgroups under ${options.cgroups?.root}: ${(error as Error).message}`);
  });
  // Runners killed with -9 whose data directories never start again: their sandboxes outlive
  // them, holding workspaces and loop devices. Killed and removed before their runtime folders,
  // which they keep busy.
  const parent = dirname(options.runtimeDir);
  await options.cgroups
    ?.removeAbandonedRunners((name, tree) => runnerGone(join(parent, name), tree))
    .catch(() => undefined);
  for (const folder of await leftFolders(options.runtimeDir)) {
    const problem = await removeRuntimeFolder(folder);
    if (problem === undefined) continue;
    // Another runner's debris is this host's problem, not a reason to refuse this runner's
    // sandboxes: it is said, and tried again at the next start.
    if (folder === options.runtimeDir) problems.push(problem);
    else log.warn(`could not remove what a stopped sandbox runner left: ${problem}`);
  }
  if (problems.length > 0) {
    throw new SandboxError(
      "recovery_failed",
      `could not remove what an earlier run of the sandbox runner left: ${problems.join("; ")}`,
    );
  }
}

/** The runner's own folder (the data directory's lock says no one else uses it), and those of
 * runners whose process is gone. */
async function leftFolders(own: string): Promise<string[]> {
  const parent = dirname(own);
  const folders = [own];
  for (const entry of await readdir(parent).catch(() => [] as string[])) {
    const folder = join(parent, entry);
    if (!entry.startsWith(runtimeFolderPrefix) || folder === own) continue;
    const pid = Number((await readFile(join(folder, "runner.pid"), "utf8").catch(() => "")).trim());
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) folders.push(folder);
  }
  return folders;
}

/** Unmounts, detaches and deletes a runtime folder; the problem in a sentence, if one stays. */
async function removeRuntimeFolder(folder: string): Promise<string | undefined> {
  for (const mountPoint of await mountsUnder(folder)) {
    // Lazy: a process of the dead run may still hold a file open for a moment.
    await run("umount", ["-l", mountPoint], { env: toolEnv }).catch(() => undefined);
  }
  for (const device of await loopDevicesUnder(folder)) {
    await run("losetup", ["-d", device], { env: toolEnv }).catch(() => undefined);
  }
  // Never through a mount left in place: a kept workspace (an agent's) would be emptied.
  if ((await mountsUnder(folder)).length === 0) {
    await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
  const mounts = await mountsUnder(folder);
  const devices = await loopDevicesUnder(folder);
  const remaining = await readdir(folder).then(
    () => true,
    () => false,
  );
  if (mounts.length === 0 && devices.length === 0 && !remaining) return undefined;
  const what = [
    mounts.length > 0 ? `mounted: ${mounts.join(", ")}` : "",
    devices.length > 0 ? `loop devices: ${devices.join(", ")}` : "",
    remaining ? `${folder} could not be deleted` : "",
  ].filter((part) => part !== "");
  return `${basename(folder)} (${what.join("; ")})`;
}

/** Mount points below `folder`, deepest first. */
export async function mountsUnder(folder: string): Promise<string[]> {
  const mounts = await readFile("/proc/self/mounts", "utf8").catch(() => "");
  return mounts
    .split("\n")
    .map((line) => line.split(" ")[1]?.replace(/\\040/g, " ") ?? "")
    .filter((mountPoint) => mountPoint.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length);
}

/** Loop devices (/dev/loopN) whose backing file is below `folder`, deleted or not. */
export function loopDevicesUnder(folder: string): Promise<string[]> {
  return loopDevicesWhere((backing) => backing.startsWith(`${folder}/`));
}

/** Loop devices (/dev/loopN) whose backing file is `file` (a kept workspace's image). */
export function loopDevicesOf(file: string): Promise<string[]> {
  return loopDevicesWhere((backing) => backing === file);
}

async function loopDevicesWhere(matches: (backing: string) => boolean): Promise<string[]> {
  const devices: string[] = [];
  for (const name of await readdir("/sys/block").catch(() => [] as string[])) {
    if (!name.startsWith("loop")) continue;
    const backing = await readFile(`/sys/block/${name}/loop/backing_file`, "utf8").catch(() => "");
    if (matches(backing.replace(/\n$/, ""))) devices.push(`/dev/${name}`);
  }
  return devices;
}

/** Whether the runner of a runtime folder runs: its folder says a pid that is alive. */
async function runnerGone(folder: string, cgroup: string): Promise<boolean> {
  const said = await readFile(join(folder, "runner.pid"), "utf8").catch(() => undefined);
  if (said !== undefined) {
    const pid = Number(said.trim());
    return !(Number.isInteger(pid) && pid > 0 && isAlive(pid));
  }
  // No runtime folder here (an earlier recovery removed it, or the runner keeps it under another
  // TMPDIR): gone only when its cgroup has not changed for an hour and none of its processes has
  // a live parent outside it, as a runner's sandboxes do (an orphan's parent is init).
  const changed = await stat(cgroup).then(
    (found) => found.mtimeMs,
    () => Date.now(),
  );
  if (Date.now() - changed < 60 * 60 * 1000) return false;
  const pids = new Set(await listProcesses([cgroup]));
  for (const pid of pids) {
    const parent = await parentOf(pid);
    if (parent !== undefined && parent !== 1 && !pids.has(parent)) return false;
  }
  return true;
}

/** The parent pid, from /proc/<pid>/stat (the field after the command's closing paren). */
async function parentOf(pid: number): Promise<number | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  const fields = text?.slice(text.lastIndexOf(")") + 2).split(" ");
  const parent = Number(fields?.[1]);
  return Number.isInteger(parent) ? parent : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
