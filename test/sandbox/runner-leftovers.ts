import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../../src/sandbox/runner/bubblewrap/cgroups/detect.js";
import { loopDevicesUnder, mountsUnder } from "../../src/sandbox/runner/bubblewrap/recovery.js";
import { runnerNameFor } from "../../src/server/sandboxes/index.js";

// What a data directory's sandbox runner leaves on the host: for the lifecycle suite, which
// stops the service every way and looks for what outlived it.

/** Where a data directory's runner keeps what it makes. */
export async function runnerPlaces(dataDir: string) {
  const runnerName = runnerNameFor(dataDir);
  const detection = await detectCgroups({ runnerName });
  if (!detection.ok) throw new Error(detection.problem);
  const driver = detection.driver;
  const cgroupRoots =
    driver.version === 1
      ? ["memory", "pids", "freezer"].map((controller) =>
          driver.root.replace("/memory/", `/${controller}/`),
        )
      : [driver.root];
  return {
    runtimeDir: join(tmpdir(), runnerName),
    cgroupRoots,
    freezeFile: driver.version === 1 ? "freezer.state" : "cgroup.freeze",
  };
}

/** What a run holds: its sandboxes' cgroups, mounts, loop devices and images. */
export async function holdings(dataDir: string) {
  const places = await runnerPlaces(dataDir);
  const cgroups = (await readdir(places.cgroupRoots[0] ?? "").catch(() => [] as string[])).filter(
    (name) => name.startsWith("sbx_") || name.startsWith("warm"),
  );
  const images = (
    await readdir(join(places.runtimeDir, "workspaces")).catch(() => [] as string[])
  ).filter((name) => name.endsWith(".img"));
  return {
    cgroups: cgroups.flatMap((name) => places.cgroupRoots.map((root) => join(root, name))),
    mounts: await mountsUnder(places.runtimeDir),
    loops: await loopDevicesUnder(places.runtimeDir),
    images: images.map((name) => join(places.runtimeDir, "workspaces", name)),
  };
}

/** Processes in the runner's cgroups, and cgroups that are frozen. */
export async function processesAndFrozen(dataDir: string) {
  const places = await runnerPlaces(dataDir);
  const pids: string[] = [];
  const frozen: string[] = [];
  const visit = async (folder: string): Promise<void> => {
    const procs = await readFile(join(folder, "cgroup.procs"), "utf8").catch(() => "");
    pids.push(...procs.split("\n").filter((line) => line !== ""));
    const state = (await readFile(join(folder, places.freezeFile), "utf8").catch(() => "")).trim();
    if (state !== "" && state !== "THAWED" && state !== "0") frozen.push(folder);
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await visit(join(folder, entry.name));
    }
  };
  for (const root of places.cgroupRoots) await visit(root);
  return { pids: [...new Set(pids)], frozen };
}

/** {@link processesAndFrozen} once no process is left, or as it is at `deadline` (ms). */
export async function processesAndFrozenUntil(dataDir: string, deadline: number) {
  let found = await processesAndFrozen(dataDir);
  while (found.pids.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = await processesAndFrozen(dataDir);
  }
  return found;
}

/**
 * What each process is, for a failure's message: its command line, state, uid, parent (and the
 * parent's command), pids in each pid namespace (NSpid), signals it blocks or ignores and its
 * cgroup. The kernel shows no process's parent-death signal; a parent of 1, or of a process
 * outside the sandbox, says that the one it would have come from is gone.
 */
export async function describeProcesses(pids: readonly (number | string)[]): Promise<string> {
  const lines = await Promise.all(
    pids.map(async (pid) => {
      const command = async (of: string) =>
        (await readFile(`/proc/${of}/cmdline`, "utf8").catch(() => ""))
          .replaceAll("\0", " ")
          .trim();
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      if (status === "") return `${pid}: gone`;
      const field = (name: string) =>
        new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1]?.trim() ?? "?";
      const parent = field("PPid");
      const cgroup = (await readFile(`/proc/${pid}/cgroup`, "utf8").catch(() => ""))
        .split("\n")
        .find((line) => /^\d+:(pids|memory)?:/.test(line) && !line.endsWith(":/"));
      return [
        `${pid} ${field("Name")} [${await command(String(pid))}]`,
        `state ${field("State")}`,
        `uid ${field("Uid").split(/\s+/)[0]}`,
        `parent ${parent} [${await command(parent)}]`,
        `NSpid ${field("NSpid")}`,
        `blocked ${field("SigBlk")} ignored ${field("SigIgn")}`,
        `cgroup ${cgroup ?? "?"}`,
      ].join(", ");
    }),
  );
  return `left:\n${lines.join("\n")}`;
}

/**
 * Whether a sandbox is starting: its cgroup holds bwrap but not yet its command (`sleep
 * infinity`, launch.ts). Until the command runs, bwrap's pid 1 may not have set its
 * parent-death signal: the moment at which a runner that dies must still take it along.
 */
export async function sandboxStarting(dataDir: string): Promise<boolean> {
  const [root] = (await runnerPlaces(dataDir)).cgroupRoots;
  for (const name of await readdir(root ?? "").catch(() => [] as string[])) {
    if (!name.startsWith("sbx_") && !name.startsWith("warm")) continue;
    const procs = await readFile(join(root ?? "", name, "cgroup.procs"), "utf8").catch(() => "");
    const commands = await Promise.all(
      procs
        .split("\n")
        .filter((line) => line !== "")
        .map((pid) => readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")),
    );
    const started = commands.some((command) => command.startsWith("/usr/bin/sleep\0"));
    if (!started && commands.some((command) => /^\S*bwrap\0/.test(command))) return true;
  }
  return false;
}
