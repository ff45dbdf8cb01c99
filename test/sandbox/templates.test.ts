import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Sandbox } from "cairn-ai/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../server/helpers.js";
import { connection, needSandboxes, startSandboxServer } from "./helpers.js";
import { projectIdOf, runnerOf, runShell, sandboxOptions } from "./runner-access.js";

/**
 * A root filesystem with nothing but a shell, sleep, ls, cat, dd, mv and the libraries they load,
 * as a template image: what a debootstrap folder is, in miniature.
 */
function tinyRootfs(): string {
  const root = mkdtempSync(join(tmpdir(), "cairn-rootfs-"));
  // Sandboxes run as unprivileged uids: the image must be readable by everyone.
  chmodSync(root, 0o755);
  const binaries = [
    "/usr/bin/dash",
    "/usr/bin/sleep",
    "/usr/bin/ls",
    "/usr/bin/cat",
    "/usr/bin/dd",
    "/usr/bin/env",
    "/usr/bin/mv",
    "/usr/bin/realpath",
  ];
  const libraries = new Set<string>();
  for (const binary of binaries) {
    for (const line of execFileSync("ldd", [binary], { encoding: "utf8" }).split("\n")) {
      const path = /(\/\S+) \(0x/.exec(line)?.[1];
      if (path !== undefined) libraries.add(path);
    }
  }
  for (const file of [...binaries, ...libraries]) {
    const target = join(root, file.replace(/^\/lib/, "/usr/lib"));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  copyFileSync("/usr/bin/dash", join(root, "usr/bin/sh"));
  for (const name of ["bin", "lib", "lib64"]) symlinkSync(`usr/${name}`, join(root, name));
  mkdirSync(join(root, "etc"));
  // An /opt of its own, which mounts under /opt/cairn must not hide.
  mkdirSync(join(root, "opt/vendor"), { recursive: true });
  writeFileSync(join(root, "opt/vendor/tool.txt"), "vendor tool");
  return root;
}

describe("templates", () => {
  let t: TestServer | undefined;
  let rootfs = "";

  beforeAll(async () => {
    rootfs = tinyRootfs();
    t = await startSandboxServer({
      sandboxes: {
        diskRangeMB: { min: 16, max: 512, default: 32 },
        templates: [{ name: "tiny", image: rootfs, cpu: "2000m", memory: "4Gi" }],
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(rootfs, { recursive: true, force: true });
  });

  it("runs a sandbox on a root filesystem folder, with the template's sizes as defaults", async (context) => {
    needSandboxes(context, t);
    const sandbox = await Sandbox.create({ ...connection(t), template: "tiny" });
    try {
      expect(sandbox.record).toMatchObject({ template: "tiny", cpuCount: 2, memoryMB: 4096 });
      const run = await sandbox.run("sh", {
        args: ["-c", "ls /usr/bin; cat /etc/hostname || echo no-hostname"],
      });
      // The template's /usr, not the host's: eight programs and no python3.
      expect(run.stdout.split("\n").slice(0, 9)).toEqual([
        "cat",
        "dash",
        "dd",
        "env",
        "ls",
        "mv",
        "realpath",
        "sh",
        "sleep",
      ]);
      expect(run.stdout).toContain("no-hostname");
      await sandbox.files.write("note.txt", "on tiny");
      expect((await sandbox.run("cat", { args: ["note.txt"] })).stdout).toBe("on tiny");
      // Without find, listing cannot work: the error says what the template lacks.
      await expect(sandbox.files.list()).rejects.toThrow(/template has no find/);
    } finally {
      await sandbox.kill();
    }
  });

  it("binds mounts under /opt/cairn on a root filesystem with an /opt of its own", async (context) => {
    needSandboxes(context, t);
    const runner = runnerOf(t);
    const projectId = projectIdOf(t);
    const core = join(rootfs, "..", `${rootfs.split("/").at(-1)}-core.mjs`);
    writeFileSync(core, "agent core", { mode: 0o644 });
    const record = await runner.create(
      projectId,
      sandboxOptions({
        template: "tiny",
        mounts: [{ hostPath: core, sandboxPath: "/opt/cairn/agent-core.mjs" }],
      }),
    );
    try {
      const run = await runShell(
        runner,
        projectId,
        record.id,
        "cat /opt/vendor/tool.txt; echo; cat /opt/cairn/agent-core.mjs; echo; ls /opt",
      );
      expect(run.stdout).toBe("vendor tool\nagent core\ncairn\nvendor");
    } finally {
      await runner.delete(projectId, record.id);
      rmSync(core, { force: true });
    }
  });

  it("refuses a missing image, or one the sandboxes could not read", async (context) => {
    needSandboxes(context, t);
    const { startTestServer } = await import("../server/helpers.js");
    await expect(
      startTestServer({
        sandboxes: {
          templates: [{ name: "ghost", image: "/nonexistent/rootfs", cpu: 1000, memory: 1024 }],
        },
      }),
    ).rejects.toThrow(
      /image \/nonexistent\/rootfs is neither "base" nor an existing root filesystem/,
    );
  });
});
