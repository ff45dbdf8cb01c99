import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { hostProcesses, whySandboxesCannotRun } from "./helpers.js";
import {
  describeProcesses,
  holdings,
  processesAndFrozen,
  processesAndFrozenUntil,
  runnerPlaces,
  sandboxStarting,
} from "./runner-leftovers.js";
import { killServices, type Running, startService as start } from "./service-process.js";

// The service stopped every way a supervisor or an operator stops it — SIGTERM, SIGINT, a
// second SIGTERM 20 ms after the first, SIGKILL — ten times each, with sandboxes and execs
// running, as `cairn dev` and as an app that embeds createServer() and calls configure().
// After each stop no process of a sandbox is left and nothing is frozen; after each restart
// on the same data directory nothing of the run before is left: no cgroup, mount, loop device
// or image. And `cairn dev` killed with SIGKILL just as a sandbox starts (bwrap running, its
// command not yet), ten times: none of the starting sandboxes' processes is left either.
const rounds = 10;
const folders: string[] = [];

afterAll(async () => {
  await killServices();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Sandboxes with execs running, a terminal among them, and markers to find them on the host. */
async function fill(running: Running, marker: string): Promise<void> {
  const connection = { endpoint: running.url, apiKey: running.apiKey };
  for (let index = 0; index < 2; index++) {
    const sandbox = await Sandbox.create(connection);
    await sandbox.files.write("data.txt", "x".repeat(100_000));
    const daemon = await sandbox.exec("sh", {
      args: [
        "-c",
        `bash -c 'exec -a ${marker}-${index} sleep 1000' & while :; do echo tick; sleep 0.01; done`,
      ],
    });
    daemon.detach();
    const terminal = await sandbox.exec("bash", { pty: true });
    terminal.detach();
  }
  const deadline = Date.now() + 5_000;
  while ((await hostProcesses(marker)).length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Stop = "SIGTERM" | "SIGINT" | "SIGTERM twice" | "SIGKILL";

async function stop(running: Running, how: Stop): Promise<void> {
  const pid = running.child.pid as number;
  if (how === "SIGTERM twice") {
    process.kill(pid, "SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (running.child.exitCode === null) process.kill(pid, "SIGTERM");
  } else {
    process.kill(pid, how);
  }
  const timer = setTimeout(() => running.child.kill("SIGKILL"), 30_000);
  await running.exited;
  clearTimeout(timer);
}

const noStack = /^\s+at .+:\d+:\d+\)?$/m;

describe.each([
  { flavor: "dev" as const, title: "cairn dev" },
  { flavor: "embedded" as const, title: "an app with createServer() and configure()" },
])("$title, stopped", ({ flavor }) => {
  it.for(["SIGTERM", "SIGINT", "SIGTERM twice", "SIGKILL"] as const)(
    "by %s ten times, leaves no process, frozen cgroup, mount, loop device or image",
    { timeout: 240_000 },
    async (how, context) => {
      const missing = await whySandboxesCannotRun();
      if (missing !== undefined) context.skip(missing);
      const dataDir = mkdtempSync(join(tmpdir(), "cairn-lifecycle-"));
      folders.push(dataDir);
      let before: Awaited<ReturnType<typeof holdings>> | undefined;
      for (let round = 0; round <= rounds; round++) {
        const running = await start(flavor, dataDir);
        if (before !== undefined) {
          // A restart on the same data directory: nothing of the run before is left.
          const now = await holdings(dataDir);
          expect({
            round,
            cgroups: now.cgroups.filter((path) => before?.cgroups.includes(path)),
          }).toEqual({ round, cgroups: [] });
          expect({
            round,
            mounts: now.mounts.filter((path) => before?.mounts.includes(path)),
          }).toEqual({ round, mounts: [] });
          expect({
            round,
            images: now.images.filter((path) => before?.images.includes(path)),
          }).toEqual({ round, images: [] });
          for (const path of before.images) expect(existsSync(path)).toBe(false);
          // Loop devices are numbered again: none may still back a file of the run before.
          for (const device of now.loops)
            expect(
              before.images.some((image) =>
                readFileSync(`/sys/block/${device.slice(5)}/loop/backing_file`, "utf8").startsWith(
                  image,
                ),
              ),
            ).toBe(false);
        }
        if (round === rounds) {
          // The last run stops gracefully: then nothing at all is left.
          await stop(running, "SIGTERM");
          const after = await holdings(dataDir);
          expect(after).toEqual({ cgroups: [], mounts: [], loops: [], images: [] });
          expect(await processesAndFrozen(dataDir)).toEqual({ pids: [], frozen: [] });
          expect(existsSync((await runnerPlaces(dataDir)).runtimeDir)).toBe(false);
          expect(running.stderr()).not.toMatch(noStack);
          break;
        }
        const marker = `lifecycle-${process.pid}-${flavor}-${round}`;
        await fill(running, marker);
        before = await holdings(dataDir);
        expect(before.cgroups.length).toBeGreaterThan(0);
        await stop(running, how);
        // However it stopped: no process of a sandbox is left, and nothing is frozen. Killed
        // processes can take seconds to go on a loaded machine (one blocked writing to its
        // loop-mounted disk dies only when the write completes), so this waits for them to go,
        // up to a bound that only a process that survives reaches.
        const deadline = Date.now() + 20_000;
        let left = await hostProcesses(marker);
        while (left.length > 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          left = await hostProcesses(marker);
        }
        expect(
          { round, how, left },
          left.length === 0 ? undefined : await describeProcesses(left),
        ).toEqual({ round, how, left: [] });
        // The same for every process in the sandboxes' cgroups (the egress relays among them).
        const inCgroups = await processesAndFrozenUntil(dataDir, deadline);
        expect(
          { round, how, ...inCgroups },
          inCgroups.pids.length === 0 ? undefined : await describeProcesses(inCgroups.pids),
        ).toEqual({
          round,
          how,
          pids: [],
          frozen: [],
        });
        if (how !== "SIGKILL") expect(running.stderr()).not.toMatch(noStack);
      }
    },
  );
});

describe("cairn dev, killed with SIGKILL while sandboxes start", () => {
  it("ten times, leaves no process of them", { timeout: 240_000 }, async (context) => {
    const missing = await whySandboxesCannotRun();
    if (missing !== undefined) context.skip(missing);
    const dataDir = mkdtempSync(join(tmpdir(), "cairn-lifecycle-"));
    folders.push(dataDir);
    for (let round = 0; round < rounds; round++) {
      const running = await start("dev", dataDir);
      // Creations, and the warm sandboxes a start makes, each start a bwrap.
      const connection = { endpoint: running.url, apiKey: running.apiKey };
      const creations = [0, 1, 2].map(() => Sandbox.create(connection).catch(() => undefined));
      // Killed once a sandbox is on its way up (or after a while, should none be seen).
      const seenBy = Date.now() + 10_000;
      while (Date.now() < seenBy && !(await sandboxStarting(dataDir))) {
        // Read again at once: the moment lasts milliseconds.
      }
      await stop(running, "SIGKILL");
      await Promise.all(creations);
      // As above, killed processes may take seconds to go; the bound is for a survivor.
      const inCgroups = await processesAndFrozenUntil(dataDir, Date.now() + 20_000);
      expect(
        { round, ...inCgroups },
        inCgroups.pids.length === 0 ? undefined : await describeProcesses(inCgroups.pids),
      ).toEqual({ round, pids: [], frozen: [] });
    }
    // A last run removes what the killed ones left, and stops leaving nothing.
    const running = await start("dev", dataDir);
    await stop(running, "SIGTERM");
    expect(await holdings(dataDir)).toEqual({ cgroups: [], mounts: [], loops: [], images: [] });
    expect(existsSync((await runnerPlaces(dataDir)).runtimeDir)).toBe(false);
  });
});
