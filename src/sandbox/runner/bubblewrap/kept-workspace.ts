import { realpathSync } from "node:fs";
import { lstat, mkdir, rename, rm, rmdir, stat, statfs } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { CairnError } from "../../../core/errors/index.js";
import type { KeptWorkspace } from "../sandbox-spec.js";
import { hostCommand } from "./host-command.js";
import { loopDevicesOf } from "./recovery.js";
import type { Workspace } from "./workspace-disks.js";

const run = hostCommand;
/** The host tools run with a fixed PATH, never the caller's. */
const toolEnv = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

/** The path a kept workspace is known by: absolute, normalized; refuses anything else. */
export function keptWorkspacePath(workspace: KeptWorkspace, runtimeDir: string): string {
  const keepAt = workspace.keepAt;
  if (typeof keepAt !== "string" || keepAt.includes("\0") || !isAbsolute(keepAt)) {
    throw new CairnError(
      "invalid_request",
      `workspace.keepAt ${JSON.stringify(keepAt)} must be an absolute host path`,
    );
  }
  // Through its folder's links, so that two spellings of one place are one workspace.
  let path = resolve(keepAt);
  try {
    path = join(realpathSync(dirname(path)), basename(path));
  } catch {
    // Its folder is made at first use.
  }
  const runtime = resolve(runtimeDir);
  if (path === runtime || path.startsWith(`${runtime}/`) || runtime.startsWith(`${path}/`)) {
    throw new CairnError(
      "invalid_request",
      `workspace.keepAt ${path} is in (or holds) the runner's runtime folder ${runtime}, which is removed at every start; keep it in the service's data folder`,
    );
  }
  return path;
}

/**
 * Mounts a kept workspace for a sandbox whose host uid is `owner`, at `mountPoint` (in the
 * runner's runtime folder, which every sandbox uid can reach, as a data folder may not be):
 * the image at `keepAt` (made now when there is none) when `enforce`, else the folder at
 * `keepAt` bound there (only when root; otherwise the sandbox runs as the runner's uid and the
 * folder itself is used). Every file in it is given to `owner` (not following links), so what an
 * earlier sandbox wrote stays readable and writable. Its release unmounts and deletes nothing.
 */
export async function acquireKeptWorkspace(options: {
  readonly keepAt: string;
  readonly sizeMB: number;
  readonly owner: { readonly uid: number; readonly gid: number };
  readonly enforce: boolean;
  readonly mountPoint: string;
}): Promise<Workspace> {
  const { keepAt, mountPoint } = options;
  await mkdir(dirname(keepAt), { recursive: true, mode: 0o700 });
  const root = process.getuid?.() === 0;
  if (!options.enforce && !root) {
    await mkdir(keepAt, { recursive: true, mode: 0o700 });
    await expectKind(keepAt, "folder");
    return { path: keepAt, enforced: false, usage: async () => undefined, release: async () => {} };
  }
  const made = options.enforce && (await prepareImage(keepAt, options.sizeMB));
  if (!options.enforce) {
    await mkdir(keepAt, { recursive: true, mode: 0o700 });
    await expectKind(keepAt, "folder");
  }
  await mkdir(mountPoint, { recursive: true });
  try {
    if (options.enforce) {
      await tool("mount", ["-o", "loop,nosuid,nodev,noatime", keepAt, mountPoint]);
      if (made) await rmdir(join(mountPoint, "lost+found")).catch(() => undefined);
    } else {
      await tool("mount", ["--bind", keepAt, mountPoint]);
      await tool("mount", ["-o", "remount,bind,nosuid,nodev", mountPoint]);
    }
    // -h and -R without -L: links themselves change hands, nothing they point to does.
    await tool("chown", ["-R", "-h", `${options.owner.uid}:${options.owner.gid}`, mountPoint]);
  } catch (error) {
    await unmount(mountPoint);
    throw error;
  }
  return {
    path: mountPoint,
    enforced: options.enforce,
    async usage() {
      if (!options.enforce) return undefined;
      const [stats, image] = await Promise.all([statfs(mountPoint), stat(keepAt)]);
      return { usedBytes: (stats.blocks - stats.bfree) * stats.bsize, sizeBytes: image.size };
    },
    release: () => unmount(mountPoint),
  };
}

/** Unmounts (lazily when busy) and removes the empty mount point, never what was in it. */
async function unmount(mountPoint: string): Promise<void> {
  await tool("umount", [mountPoint]).catch(() =>
    tool("umount", ["-l", mountPoint]).catch(() => undefined),
  );
  await rmdir(mountPoint).catch(() => undefined);
}

/**
 * Makes the image when there is none (under another name first, so that a crash halfway
 * leaves none), checks that no loop device still holds it (a sandbox of an earlier run whose
 * processes are dying), and repairs what a crash left in its filesystem. True when made now.
 */
async function prepareImage(image: string, sizeMB: number): Promise<boolean> {
  const found = await lstat(image).catch(() => undefined);
  if (found === undefined) {
    const making = `${image}.new-${process.pid}`;
    try {
      await tool("truncate", ["-s", `${sizeMB}M`, making]);
      await tool("mkfs.ext4", ["-q", "-F", "-m", "0", "-E", "lazy_itable_init=1", making]);
      await rename(making, image);
    } catch (error) {
      await rm(making, { force: true });
      throw new Error(`could not make the workspace image ${image}: ${(error as Error).message}`);
    }
    return true;
  }
  await expectKind(image, "file");
  for (let waited = 0; (await loopDevicesOf(image)).length > 0; waited += 100) {
    if (waited >= 5_000) {
      const devices = await loopDevicesOf(image);
      for (const device of devices) await tool("losetup", ["-d", device]).catch(() => undefined);
      if ((await loopDevicesOf(image)).length === 0) break;
      throw new Error(
        `the workspace image ${image} is still attached to ${devices.join(", ")} (a sandbox of an earlier run may still use it); detach it with losetup -d, then retry`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  // -p: repair what is safe without asking; 1 means it did, 4 and above that it could not.
  // Without e2fsck (ENOENT) the kernel's own checks at mount are what there is.
  const problem = await run("e2fsck", ["-p", image], { env: toolEnv }).then(
    () => undefined,
    (error: { code?: unknown; stdout?: string; stderr?: string }) =>
      error.code === "ENOENT" || (typeof error.code === "number" && error.code < 4)
        ? undefined
        : `${error.stdout ?? ""}${error.stderr ?? ""}`.trim() || `exit code ${String(error.code)}`,
  );
  if (problem !== undefined) {
    throw new Error(`the workspace image ${image} is damaged, e2fsck -p says: ${problem}`);
  }
  return false;
}

async function expectKind(path: string, kind: "file" | "folder"): Promise<void> {
  const found = await lstat(path);
  const ok = kind === "file" ? found.isFile() : found.isDirectory();
  if (!ok) {
    throw new Error(
      `the kept workspace ${path} is not a ${kind === "file" ? "regular file (an image)" : "folder"}: ${kind === "file" ? "this runner enforces disk sizes, and keeps workspaces as images" : "this runner cannot enforce disk sizes, and keeps workspaces as folders"}; move it away or use another path`,
    );
  }
}

function tool(command: string, args: readonly string[]): Promise<unknown> {
  return run(command, [...args], { env: toolEnv });
}
