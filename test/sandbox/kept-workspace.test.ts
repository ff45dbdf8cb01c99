import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chownSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loopDevicesOf } from "../../src/sandbox/runner/bubblewrap/recovery.js";
import { WorkspaceDisks } from "../../src/sandbox/runner/bubblewrap/workspace-disks.js";
import type { SandboxRunner } from "../../src/sandbox/runner/runner.js";
import { runnerNameFor } from "../../src/server/sandboxes/service.js";
import type { TestServer } from "../server/helpers.js";
import { needSandboxes, startSandboxServer, whySandboxesCannotRun } from "./helpers.js";
import { projectIdOf, runnerOf, runShell, sandboxOptions } from "./runner-access.js";

// A sandbox's /workspace kept at a host path (an agent's): it outlives the sandbox, a restart
// of the service and a crash of it; each new sandbox (another host uid) can read and write what
// the one before wrote; giving it the files never follows a link the sandbox planted.

const folders: string[] = [];
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "cairn-kept-"));
  folders.push(folder);
  return folder;
}

/** Mount points of a data directory's runner that hold kept workspaces now. */
function keptMounts(dataDir: string): string[] {
  const runtimeDir = join(tmpdir(), runnerNameFor(dataDir));
  return readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .filter((mountPoint) => mountPoint.startsWith(`${runtimeDir}/workspaces/keep-`));
}

/** Runs `script` in a new sandbox on the kept workspace, then stops the sandbox. */
async function inKept(t: TestServer, keepAt: string, script: string) {
  const runner: SandboxRunner = runnerOf(t);
  const projectId = projectIdOf(t);
  const record = await runner.create(projectId, sandboxOptions({ workspace: { keepAt } }));
  try {
    return await runShell(runner, projectId, record.id, script);
  } finally {
    await runner.delete(projectId, record.id);
  }
}

/** Whether the file's owner inside the sandbox is the sandbox's user, and it can write it. */
const ownedAndWritable = (path: string) =>
  `test "$(stat -c %u ${path})" = "$(id -u)" && test -w ${path} && echo owned`;

describe("a kept workspace", () => {
  it("survives its sandbox's stop and a restart of the service, writable by the next sandbox", async (context) => {
    const dataDir = newFolder();
    const t = await startSandboxServer({ dataDir });
    needSandboxes(context, t);
    const keepAt = join(dataDir, "agents", "agt_kept", "workspace");
    const victim = join(newFolder(), "victim");
    try {
      await twoSandboxesInTurn(t, keepAt, victim);
    } finally {
      await t.stop();
    }
    const again = await startSandboxServer({ dataDir });
    needSandboxes(context, again);
    try {
      const afterRestart = await inKept(
        again,
        keepAt,
        `cat src/a.txt && ls src/deep && echo three >> src/a.txt && ${ownedAndWritable("src/deep/c.txt")}`,
      );
      expect(afterRestart).toMatchObject({
        exitCode: 0,
        stdout: "one\ntwo\nb.txt\nc.txt\nowned",
      });
      expect(statSync(victim).uid).toBe(0);
    } finally {
      await again.stop();
    }
    expect(keptMounts(dataDir)).toEqual([]);
  });

  async function twoSandboxesInTurn(t: TestServer, keepAt: string, victim: string) {
    const dataDir = t.dataDir;
    const enforced = !runnerOf(t).unenforcedLimits.includes("disk");
    // A host file that root owns, which a link in the workspace names: giving the workspace's
    // files to the next sandbox must change the link, never this.
    writeFileSync(victim, "host file", { mode: 0o644 });
    chownSync(victim, 0, 0);
    const first = await inKept(
      t,
      keepAt,
      `mkdir -p src/deep && echo one > src/a.txt && chmod 600 src/a.txt && echo x > src/deep/b.txt && ln -s ${victim} src/link && ${ownedAndWritable("src/a.txt")}`,
    );
    expect(first).toMatchObject({ exitCode: 0, stdout: "owned" });
    // Stopped: unmounted, not deleted; an image of the size asked for where sizes are enforced.
    expect(keptMounts(dataDir)).toEqual([]);
    expect(lstatSync(keepAt).isFile()).toBe(enforced);
    if (enforced) {
      expect(statSync(keepAt).size).toBe(32 * 1024 * 1024);
      expect(await loopDevicesOf(keepAt)).toEqual([]);
    }
    const second = await inKept(
      t,
      keepAt,
      `cat src/a.txt && echo two >> src/a.txt && touch src/deep/c.txt && ${ownedAndWritable("src/a.txt")} && ${ownedAndWritable("src/deep/b.txt")} && readlink src/link`,
    );
    expect(second).toMatchObject({ exitCode: 0, stdout: `one\nowned\nowned\n${victim}` });
    expect(statSync(victim).uid).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("host file");
  }

  it("survives a crash of the service: the next start unmounts it and deletes nothing", async (context) => {
    const missing = await whySandboxesCannotRun();
    if (missing !== undefined) context.skip(missing);
    const dataDir = newFolder();
    const keepAt = join(dataDir, "agents", "agt_crash", "workspace");
    const fixture = fileURLToPath(
      new URL("../fixtures/sandbox/kept-workspace-service.ts", import.meta.url),
    );
    const child = spawn(process.execPath, ["--import", "tsx", fixture, dataDir, keepAt], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    let said = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
    });
    const exited = once(child, "exit");
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", () => {
        if (said.includes("ready ")) resolve();
      });
      void exited.then(() => reject(new Error(`the service exited before it was ready: ${said}`)));
    });
    expect(keptMounts(dataDir)).toHaveLength(1);
    child.kill("SIGKILL");
    await exited;
    children.delete(child);
    // What the crash left: the kept workspace still mounted in the runtime folder.
    expect(keptMounts(dataDir)).toHaveLength(1);

    const t = await startSandboxServer({ dataDir });
    needSandboxes(context, t);
    try {
      expect(keptMounts(dataDir)).toEqual([]);
      expect(lstatSync(keepAt).isFile()).toBe(!runnerOf(t).unenforcedLimits.includes("disk"));
      const after = await inKept(
        t,
        keepAt,
        `cat crash.txt && echo after >> crash.txt && ${ownedAndWritable("crash.txt")}`,
      );
      expect(after).toMatchObject({ exitCode: 0, stdout: "before the crash\nowned" });
    } finally {
      await t.stop();
    }
  });

  it("is a folder where sizes are not enforced, kept and given to each new owner", async (context) => {
    if (process.getuid?.() !== 0)
      context.skip("binding a kept folder into the runtime folder needs root");
    const runtime = newFolder();
    const keepAt = join(newFolder(), "agents", "agt_plain", "workspace");
    const disks = new WorkspaceDisks({
      folder: join(runtime, "workspaces"),
      enforce: false,
      poolCount: 0,
      poolSizeMB: 32,
    });
    await disks.start();
    const victim = join(newFolder(), "victim");
    writeFileSync(victim, "host file");
    const first = await disks.acquire(32, { uid: 600_001, gid: 600_001 }, keepAt);
    expect(first.path).not.toBe(keepAt);
    writeFileSync(join(first.path, "note.txt"), "kept");
    chownSync(join(first.path, "note.txt"), 600_001, 600_001);
    symlinkSync(victim, join(first.path, "link"));
    await first.release();
    expect(readFileSync(join(keepAt, "note.txt"), "utf8")).toBe("kept");
    const second = await disks.acquire(32, { uid: 700_002, gid: 700_002 }, keepAt);
    try {
      expect(statSync(join(second.path, "note.txt")).uid).toBe(700_002);
      expect(statSync(second.path).uid).toBe(700_002);
      expect(lstatSync(join(second.path, "link")).uid).toBe(700_002);
      expect(statSync(victim).uid).toBe(0);
    } finally {
      await second.release();
      await disks.close();
    }
    expect(readFileSync(join(keepAt, "note.txt"), "utf8")).toBe("kept");
  });
});
