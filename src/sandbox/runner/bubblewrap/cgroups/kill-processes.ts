import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CgroupError } from "./cgroup-error.js";
import {
  describeError,
  errorCode,
  listChildren,
  readOptional,
  writeOptional,
} from "./cgroup-files.js";

const pollMilliseconds = 10;
const giveUpMilliseconds = 2_000;
/** How long a round's SIGKILLs get to take effect before the next round is tried. */
const roundMilliseconds = 250;

/**
 * The host pids in each cgroup tree (the cgroup and all its descendants). Processes in other
 * pid namespaces are listed by their host pid, which is the one `kill` needs.
 */
export async function listProcesses(trees: readonly string[]): Promise<number[]> {
  const pids = new Set<number>();
  const visit = async (directory: string): Promise<void> => {
    const text = await readOptional(join(directory, "cgroup.procs"));
    if (text === undefined) return;
    for (const line of text.split("\n")) {
      const pid = Number(line);
      if (line !== "" && Number.isInteger(pid) && pid > 0) pids.add(pid);
    }
    for (const name of await listChildren(directory)) await visit(join(directory, name));
  };
  for (const tree of trees) await visit(tree);
  return [...pids];
}

export function killProcesses(pids: readonly number[], description: string): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch (error) {
      // It exited between the listing and the kill.
      if (errorCode(error) === "ESRCH") continue;
      throw new CgroupError(
        `Could not SIGKILL process ${pid} in ${description}: ${describeError(error)}. The runner must run as root.`,
        { path: description, cause: error },
      );
    }
  }
}

/** Polls until `done` says yes or the time is up; resolves with whether it said yes. */
export async function waitFor(
  done: () => Promise<boolean>,
  timeoutMilliseconds: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMilliseconds;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(pollMilliseconds);
  }
}

/**
 * The runner cgroups under `parents` (one folder per controller hierarchy), other than `own`,
 * that `abandoned` says are gone.
 */
export async function abandonedSiblings(
  parents: readonly string[],
  own: string,
  abandoned: (name: string, tree: string) => Promise<boolean>,
): Promise<string[]> {
  const found = new Set<string>();
  for (const parent of parents) {
    for (const name of await listChildren(parent)) {
      if (name === own || found.has(name)) continue;
      if (await abandoned(name, join(parent, name))) found.add(name);
    }
  }
  return [...found];
}

/**
 * Thaws every frozen cgroup in the tree, deepest last: a runner of an earlier version (or one
 * killed between a freeze and a thaw) may have left processes frozen, which no SIGKILL ends
 * until they are thawed. `file` and the thawed value: v1 "freezer.state" "THAWED", v2
 * "cgroup.freeze" "0".
 */
export async function thawTree(tree: string, file: string, thawed: string): Promise<void> {
  const state = (await readOptional(join(tree, file)))?.trim();
  if (state !== undefined && state !== thawed && state !== "0" && state !== "THAWED") {
    await writeOptional(join(tree, file), thawed, `thaw ${tree}`);
  }
  for (const name of await listChildren(tree)) await thawTree(join(tree, name), file, thawed);
}

/**
 * One kill round that needs no freezing, so nothing is left frozen if the runner dies in the
 * middle of it: pids.max = 0 stops every fork in the subtree (the kernel checks each fork
 * against every ancestor's limit), then each listed process gets SIGKILL. A process forked
 * between the listing and the kills is found by the next round.
 */
export async function killWithoutFreezing(options: {
  readonly trees: readonly string[];
  /** The pids.max of the tree's root, when the pids controller is there. */
  readonly pidsMax: string | undefined;
  readonly description: string;
}): Promise<void> {
  if (options.pidsMax !== undefined) {
    await writeOptional(options.pidsMax, "0", `stop forks in ${options.description}`);
  }
  killProcesses(await listProcesses(options.trees), options.description);
}

/**
 * Runs kill rounds until no process is left in the trees. One round (pids.max = 0 and SIGKILL,
 * or v2's cgroup.kill) is normally enough; more are for a process that was mid-fork.
 */
export async function killUntilEmpty(options: {
  readonly trees: readonly string[];
  readonly round: () => Promise<void>;
  readonly description: string;
}): Promise<void> {
  const deadline = Date.now() + giveUpMilliseconds;
  let nextRound = 0;
  for (;;) {
    const pids = await listProcesses(options.trees);
    if (pids.length === 0) return;
    const now = Date.now();
    if (now >= deadline) {
      throw new CgroupError(
        `${pids.length} process(es) in ${options.description} survived SIGKILL for ${giveUpMilliseconds / 1000} s (pids ${pids.slice(0, 10).join(", ")}); they are probably stuck in the kernel (state D in /proc/<pid>/stat). Retry destroy() later.`,
        { path: options.description },
      );
    }
    if (now >= nextRound) {
      await options.round();
      nextRound = Date.now() + roundMilliseconds;
    }
    await sleep(pollMilliseconds);
  }
}
