import { chown, mkdir, rm, rmdir, statfs } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../../core/logger.js";
import { hostCommand } from "./host-command.js";
import { acquireKeptWorkspace } from "./kept-workspace.js";

const run = hostCommand;

/** A sandbox's /workspace on the host. */
export interface Workspace {
  /** The host directory bound at /workspace. */
  readonly path: string;
  /** True when the size is held by a filesystem of that size (a loop-mounted ext4 image). */
  readonly enforced: boolean;
  /** Bytes used and the size, as the filesystem reports them (enforced workspaces only). */
  usage(): Promise<{ usedBytes: number; sizeBytes: number } | undefined>;
  /** Unmounts and deletes it. The sandbox's processes must be gone. */
  release(): Promise<void>;
}

export interface WorkspaceDiskOptions {
  /** Where images and mount points live. */
  readonly folder: string;
  /** Hold each workspace to its size with a loop-mounted ext4 image (root, loop devices). */
  readonly enforce: boolean;
  /** Workspaces of `poolSizeMB` kept formatted and mounted ahead, so a create does not wait. */
  readonly poolCount: number;
  readonly poolSizeMB: number;
  /** Resolves when background work may go on without slowing a request. */
  readonly whenQuiet?: () => Promise<void>;
}

interface Prepared {
  readonly image: string;
  readonly mountPoint: string;
  readonly sizeMB: number;
}

/**
 * Workspaces of a fixed size: each a sparse ext4 image (only what is written takes disk),
 * loop-mounted `nosuid,nodev`, so writing past the size fails with ENOSPC inside the sandbox
 * and nothing it does can fill the host's disk. Formatting and mounting take tens of
 * milliseconds, so a few of the common size are kept ready.
 */
export class WorkspaceDisks {
  private readonly ready: Prepared[] = [];
  private refilling: Promise<void> | undefined;
  private counter = 0;
  private closed = false;

  constructor(private readonly options: WorkspaceDiskOptions) {}

  /** Makes the folder and fills the pool (what an earlier run left is gone: recovery.ts). */
  async start(): Promise<void> {
    await mkdir(this.options.folder, { recursive: true, mode: 0o711 });
    this.refill();
  }

  /**
   * A workspace of `sizeMB` for a sandbox whose host uid is `owner`: a fresh one, or the one
   * kept at `keepAt` (kept-workspace.ts), which its release unmounts but never deletes.
   */
  async acquire(
    sizeMB: number,
    owner: { uid: number; gid: number },
    keepAt?: string,
  ): Promise<Workspace> {
    await mkdir(this.options.folder, { recursive: true });
    if (keepAt !== undefined) {
      return acquireKeptWorkspace({
        keepAt,
        sizeMB,
        owner,
        enforce: this.options.enforce,
        mountPoint: join(this.options.folder, `keep-${this.nextName()}`),
      });
    }
    if (!this.options.enforce) return this.plainWorkspace(owner);
    let prepared = sizeMB === this.options.poolSizeMB ? this.ready.shift() : undefined;
    prepared ??= await this.prepare(sizeMB);
    await chown(prepared.mountPoint, owner.uid, owner.gid);
    return enforcedWorkspace(prepared);
  }

  /** Unmounts and deletes the workspaces kept ready. */
  async close(): Promise<void> {
    this.closed = true;
    await this.refilling;
    await Promise.all(this.ready.splice(0).map((each) => enforcedWorkspace(each).release()));
  }

  /**
   * Makes workspaces until the pool is full, in the background. Called after a sandbox has
   * started rather than at once: formatting competes with the start for CPU and disk.
   */
  refill(): void {
    if (this.refilling !== undefined || this.closed) return;
    this.refilling = (async () => {
      while (!this.closed && this.ready.length < this.options.poolCount) {
        await this.options.whenQuiet?.();
        if (this.closed) break;
        const prepared = await this.prepare(this.options.poolSizeMB).catch((error: unknown) => {
          // Closing, the failure is the stop's own: a Ctrl-C at a terminal reaches the whole
          // process group, mkfs.ext4 among it.
          if (!this.closed) log.error("could not prepare a sandbox workspace", error);
          return undefined;
        });
        if (prepared === undefined) break;
        if (this.closed) await enforcedWorkspace(prepared).release();
        else this.ready.push(prepared);
      }
    })().finally(() => {
      this.refilling = undefined;
    });
  }

  private nextName(): string {
    return `${process.pid}-${++this.counter}-${Date.now().toString(36)}`;
  }

  private async prepare(sizeMB: number): Promise<Prepared> {
    const name = `ws-${this.nextName()}`;
    const image = join(this.options.folder, `${name}.img`);
    const mountPoint = join(this.options.folder, name);
    await mkdir(mountPoint, { recursive: true });
    try {
      await run("truncate", ["-s", `${sizeMB}M`, image]);
      // No journal: a sandbox's workspace does not outlive a crash of its runner anyway.
      await run("mkfs.ext4", [
        "-q",
        "-F",
        "-O",
        "^has_journal",
        "-m",
        "0",
        "-E",
        "lazy_itable_init=1",
        image,
      ]);
      await run("mount", ["-o", "loop,nosuid,nodev,noatime", image, mountPoint]);
      await rmdir(join(mountPoint, "lost+found")).catch(() => undefined);
      return { image, mountPoint, sizeMB };
    } catch (error) {
      await run("umount", [mountPoint]).catch(() => undefined);
      await rm(image, { force: true });
      await rm(mountPoint, { recursive: true, force: true });
      throw new Error(`could not make a ${sizeMB} MB workspace: ${(error as Error).message}`);
    }
  }

  private async plainWorkspace(owner: { uid: number; gid: number }): Promise<Workspace> {
    const path = join(this.options.folder, `ws-${this.nextName()}`);
    await mkdir(path);
    if (process.getuid?.() === 0) await chown(path, owner.uid, owner.gid);
    return {
      path,
      enforced: false,
      usage: async () => undefined,
      release: () => rm(path, { recursive: true, force: true }),
    };
  }
}

function enforcedWorkspace(prepared: Prepared): Workspace {
  return {
    path: prepared.mountPoint,
    enforced: true,
    async usage() {
      const stats = await statfs(prepared.mountPoint);
      return {
        usedBytes: (stats.blocks - stats.bfree) * stats.bsize,
        sizeBytes: prepared.sizeMB * 1024 * 1024,
      };
    },
    async release() {
      // Lazy: a file still open by a process that is being killed must not keep the mount.
      await run("umount", ["-l", prepared.mountPoint]).catch(() => undefined);
      await rm(prepared.image, { force: true });
      await rm(prepared.mountPoint, { recursive: true, force: true });
    },
  };
}
