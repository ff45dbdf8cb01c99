import {
  closeSync,
  constants,
  type Dirent,
  type FSWatcher,
  lstatSync,
  openSync,
  watch,
} from "node:fs";
import { readdir } from "node:fs/promises";

/** A change under /workspace, by its path inside the sandbox. */
export interface WorkspaceChange {
  readonly path: string;
  readonly change: "created" | "modified" | "deleted";
}

/** Directories watched at most, and how deep: a tenant cannot spend the host's inotify watches. */
const maxDirectories = 256;
const maxDepth = 6;

interface Watched {
  readonly fd: number;
  readonly watcher: FSWatcher;
  readonly path: string;
  readonly depth: number;
}

/**
 * Watches a sandbox's workspace from the host with inotify, without ever following a link the
 * tenant made: each directory is opened with O_NOFOLLOW through its parent's open descriptor
 * (`/proc/self/fd/<parent>/<name>`), and the watch is put on the descriptor's own magic link, so
 * a directory swapped for a symbolic link to the host's /etc between a check and the watch is
 * never watched. At most 256 directories, 6 deep; changes deeper are not reported.
 */
export class WorkspaceWatcher {
  readonly #watched = new Map<string, Watched>();
  readonly #onChange: (change: WorkspaceChange) => void;
  #closed = false;

  private constructor(onChange: (change: WorkspaceChange) => void) {
    this.#onChange = onChange;
  }

  /** Starts watching `hostPath` (the host directory bound at /workspace). */
  static async start(
    hostPath: string,
    onChange: (change: WorkspaceChange) => void,
  ): Promise<WorkspaceWatcher> {
    const watcher = new WorkspaceWatcher(onChange);
    const fd = openSync(hostPath, constants.O_RDONLY | constants.O_DIRECTORY);
    await watcher.#add("/workspace", fd, 0, false);
    return watcher;
  }

  /** How many directories are watched. */
  get size(): number {
    return this.#watched.size;
  }

  close(): void {
    this.#closed = true;
    for (const watched of this.#watched.values()) this.#release(watched);
    this.#watched.clear();
  }

  /**
   * Watches one directory and those under it. `announce`: the directory appeared while watched,
   * so what is already in it (made before its watch was in place) is reported as created.
   */
  async #add(path: string, fd: number, depth: number, announce: boolean): Promise<void> {
    if (this.#closed || this.#watched.has(path) || this.#watched.size >= maxDirectories) {
      closeSync(fd);
      return;
    }
    let watcher: FSWatcher;
    try {
      watcher = watch(`/proc/self/fd/${fd}`, { persistent: false }, (event, name) =>
        this.#changed(path, fd, depth, event, name),
      );
    } catch {
      closeSync(fd);
      return;
    }
    watcher.on("error", () => this.#remove(path));
    this.#watched.set(path, { fd, watcher, path, depth });
    let entries: Dirent[] = [];
    try {
      entries = await readdir(`/proc/self/fd/${fd}`, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (announce) this.#onChange({ path: `${path}/${entry.name}`, change: "created" });
      if (entry.isDirectory() && depth < maxDepth) {
        await this.#addChild(path, fd, entry.name, depth + 1, announce);
      }
    }
  }

  async #addChild(
    parentPath: string,
    parentFd: number,
    name: string,
    depth: number,
    announce: boolean,
  ): Promise<void> {
    if (this.#closed || this.#watched.size >= maxDirectories || depth > maxDepth) return;
    let fd: number;
    try {
      fd = openSync(
        `/proc/self/fd/${parentFd}/${name}`,
        constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
      );
    } catch {
      return; // Gone, not a directory, or a symbolic link: not watched.
    }
    await this.#add(`${parentPath}/${name}`, fd, depth, announce);
  }

  #changed(
    path: string,
    fd: number,
    depth: number,
    event: string,
    name: string | Buffer | null,
  ): void {
    if (this.#closed || name === null) return;
    const child = `${path}/${name.toString()}`;
    if (event === "change") {
      this.#onChange({ path: child, change: "modified" });
      return;
    }
    // "rename": created, deleted or moved in or out; the descriptor says which.
    let exists = true;
    let isDirectory = false;
    try {
      // lstat: the last component is not followed; the descriptor's link before it is safe.
      isDirectory = lstatSync(`/proc/self/fd/${fd}/${name.toString()}`).isDirectory();
    } catch {
      exists = false;
    }
    this.#onChange({ path: child, change: exists ? "created" : "deleted" });
    if (!exists) {
      for (const watched of [...this.#watched.values()]) {
        if (watched.path === child || watched.path.startsWith(`${child}/`))
          this.#remove(watched.path);
      }
    } else if (isDirectory) {
      void this.#addChild(path, fd, name.toString(), depth + 1, true);
    }
  }

  #remove(path: string): void {
    const watched = this.#watched.get(path);
    if (watched === undefined) return;
    this.#watched.delete(path);
    this.#release(watched);
  }

  #release(watched: Watched): void {
    watched.watcher.close();
    try {
      closeSync(watched.fd);
    } catch {
      // Already closed.
    }
  }
}
