import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import { afterAll, describe, expect, it, onTestFinished, type TestContext } from "vitest";
import { launchHelper } from "../../src/sandbox/runner/enter-helper.js";
import { hostProcesses } from "./helpers.js";

// The launch helper (native/cairn-launch.c), the parent of each sandbox's bwrap: what it runs,
// and whatever is orphaned below it (as bwrap's pid 1 is when bwrap dies before that pid 1 has
// set its parent-death signal), must not outlive the runner, however the runner ends.

const marker = `launch-helper-${process.pid}`;

afterAll(async () => {
  for (const pid of await hostProcesses(marker)) kill(pid);
});

/** The built helper; skips the test where it cannot be built. */
async function helperOrSkip(context: TestContext): Promise<string> {
  if (process.platform !== "linux") context.skip("the launch helper is for Linux");
  const helper = await launchHelper();
  if (!helper.ok) context.skip(`${helper.problem} (fix: ${helper.fix})`);
  return helper.path;
}

/** Waits for `count` processes named with `text` (a bound only a broken setup reaches), then lists them. */
async function whenRunning(text: string, count: number): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  let pids = await hostProcesses(text);
  while (pids.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    pids = await hostProcesses(text);
  }
  return pids;
}

function parentOf(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/stat`, "utf8").then((stat) =>
    Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]),
  );
}

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/**
 * A shell script that leaves a daemon orphaned below the helper (its parent exits at once), a
 * child of its command, and then becomes a long-running command: each named `$TAG-<role>`. The
 * tag comes from the environment ({@link tagged}), so that only these command lines hold it.
 */
const family = [
  `(setsid bash -c 'exec -a "$TAG-orphan" sleep 1000' &)`,
  `bash -c 'exec -a "$TAG-child" sleep 1000' &`,
  `exec -a "$TAG-command" sleep 1000`,
].join("\n");

/** The environment of a command whose processes name themselves with `tag`. */
function tagged(tag: string): NodeJS.ProcessEnv {
  return { PATH: "/usr/bin:/bin", TAG: tag };
}

function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve([child.exitCode, child.signalCode]);
  }
  return once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
}

describe("the launch helper", () => {
  it("kills its command and every process orphaned below it when the runner is killed", async (context) => {
    const helper = await helperOrSkip(context);
    const tag = `${marker}-killed`;
    // The runner: a process of its own that starts the helper as the runner does (stdin a pipe
    // it never writes to), then is killed with SIGKILL.
    const runnerScript = `
      const { spawn } = require("node:child_process");
      const [helper, ...command] = JSON.parse(process.argv[1]);
      const child = spawn(helper, command, { stdio: ["pipe", "ignore", "inherit"], detached: true });
      child.stdin.on("error", () => undefined);
      process.stdout.write("helper " + child.pid + "\\n");
      setInterval(() => undefined, 1 << 30);
    `;
    const runner = spawn(
      process.execPath,
      ["-e", runnerScript, JSON.stringify([helper, "/bin/bash", "-c", family])],
      { stdio: ["ignore", "pipe", "inherit"], env: tagged(tag) },
    );
    onTestFinished(() => {
      runner.kill("SIGKILL");
    });
    const [line] = (await once(runner.stdout as Readable, "data")) as [Buffer];
    const helperPid = Number(/helper (\d+)/.exec(line.toString())?.[1]);
    const running = await whenRunning(tag, 3);
    expect(running).toHaveLength(3);
    // The daemon was orphaned while the helper runs: it is the helper's now, not init's.
    const [orphan] = await hostProcesses(`${tag}-orphan`);
    expect(await parentOf(orphan as number)).toBe(helperPid);

    runner.kill("SIGKILL");
    await exitOf(runner);
    // They go as soon as the helper sees the runner's end; the bound is only for a survivor.
    const deadline = Date.now() + 10_000;
    let left = [...(await hostProcesses(tag)), ...(await hostProcesses(`${helper} `))];
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = [...(await hostProcesses(tag)), ...(await hostProcesses(`${helper} `))];
    }
    expect(left).toEqual([]);
    // The helper has exited too (a zombie until init reaps it).
    const state = await readFile(`/proc/${helperPid}/stat`, "utf8").then(
      (stat) => stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0],
      () => "gone",
    );
    expect(state).toBeOneOf(["Z", "gone"]);
  });

  it("when its command ends, kills what the command left and exits as the command did", async (context) => {
    const helper = await helperOrSkip(context);
    const tag = `${marker}-ended`;
    const script = `(setsid bash -c 'exec -a "$TAG-orphan" sleep 1000' &)\nexit 7`;
    const child = spawn(helper, ["/bin/bash", "-c", script], {
      stdio: ["pipe", "ignore", "inherit"],
      env: tagged(tag),
    });
    expect(await exitOf(child)).toEqual([7, null]);
    // The helper waits for every process it kills: none is left once it has exited.
    expect(await hostProcesses(tag)).toEqual([]);
  });

  it("ends with its command's signal, and kills its command when its stdin ends", async (context) => {
    const helper = await helperOrSkip(context);
    const killed = spawn(helper, ["/bin/bash", "-c", "kill -TERM $$"], {
      stdio: ["pipe", "ignore", "inherit"],
    });
    expect(await exitOf(killed)).toEqual([null, "SIGTERM"]);

    const tag = `${marker}-stdin`;
    const child = spawn(helper, ["/bin/bash", "-c", family], {
      stdio: ["pipe", "ignore", "inherit"],
      env: tagged(tag),
    });
    expect(await whenRunning(tag, 3)).toHaveLength(3);
    child.stdin?.end();
    expect(await exitOf(child)).toEqual([null, "SIGKILL"]);
    expect(await hostProcesses(tag)).toEqual([]);
  });

  it("gives its command /dev/null as stdin and fds 3 and up, keeping no copy of them", async (context) => {
    const helper = await helperOrSkip(context);
    const tag = `${marker}-fds`;
    const script = `readlink /proc/self/fd/0 >&3\nexec 3>&-\nexec -a "$TAG" sleep 1000`;
    const child = spawn(helper, ["/bin/bash", "-c", script], {
      stdio: ["pipe", "ignore", "inherit", "pipe"],
      env: tagged(tag),
    });
    const output = child.stdio[3] as Readable;
    let said = "";
    output.setEncoding("utf8").on("data", (text: string) => {
      said += text;
    });
    // The pipe ends while the command still runs: only the command held its other end.
    await once(output, "end");
    expect(said).toBe("/dev/null\n");
    expect(await whenRunning(tag, 1)).toHaveLength(1);
    child.stdin?.end();
    expect(await exitOf(child)).toEqual([null, "SIGKILL"]);
  });
});
