import type { FileEntry } from "../client/files.js";
import { Cell, type ReadonlyCell } from "./cell.js";
import type { FileService } from "./file-service.js";
import { mentioning, shownName } from "./format.js";
import { freeName, nameProblem } from "./names.js";
import { baseName, isWithin, joinPath, normalizePath, parentOf, pathTrail } from "./paths.js";
import { compareNames, type SortKey, type SortOrder, sortEntries } from "./sort.js";
import type {
  DirectoryListing,
  FileAction,
  FileClipboard,
  FileManagerError,
  PendingOperation,
  TreeRow,
  ViewMode,
} from "./types.js";

export interface FileManagerStoreOptions {
  readonly service: FileService;
  /** The top the manager never leaves (default /workspace). */
  readonly root?: string | undefined;
  readonly initialPath?: string | undefined;
  readonly initialView?: ViewMode | undefined;
  readonly initialSort?: SortOrder | undefined;
  readonly initialSelection?: readonly string[] | undefined;
  /** Changes reported within this many milliseconds are read back together (default 150). */
  readonly refreshDelayMs?: number | undefined;
}

/** What the store tells its owner; replaced on each render by the hook. */
export interface FileManagerCallbacks {
  readonly onPathChange?: ((path: string) => void) | undefined;
  readonly onSelectionChange?: ((paths: string[]) => void) | undefined;
  readonly onViewChange?: ((view: ViewMode) => void) | undefined;
  readonly onOpenFile?: ((entry: FileEntry) => void) | undefined;
  /** The owner holds the path: navigating asks it through onPathChange. */
  readonly pathControlled?: boolean | undefined;
  /** The owner holds the selection: selecting asks it through onSelectionChange. */
  readonly selectionControlled?: boolean | undefined;
  /** The owner holds the view: switching asks it through onViewChange. */
  readonly viewControlled?: boolean | undefined;
}

/** How a click or a key changes the selection. */
export type SelectMode = "replace" | "toggle" | "range";

const verbs: Record<FileAction, string> = {
  open: "open",
  rename: "rename",
  delete: "delete",
  "create-folder": "create the folder",
  move: "move",
  upload: "upload",
  download: "download",
};

const emptySet: ReadonlySet<string> = new Set();
const idle = (path: string): DirectoryListing => ({
  path,
  status: "idle",
  entries: [],
  refreshing: false,
  error: undefined,
});

const isAbort = (error: unknown) => error instanceof Error && error.name === "AbortError";

/**
 * A file manager's state, framework-free: the current folder, each folder's children read
 * lazily and kept per path, sort, selection, focus, view, pending changes and errors. Each
 * piece is a cell of its own, so a reader re-renders only for what it shows. Follows the
 * sandbox's file events once started, and reads again only the folders whose entries changed.
 */
export class FileManagerStore {
  readonly root: string;
  readonly #service: FileService;
  readonly #refreshDelayMs: number;
  callbacks: FileManagerCallbacks = {};

  readonly #path: Cell<string>;
  readonly #entries = new Cell<readonly FileEntry[]>([]);
  readonly #selection: Cell<ReadonlySet<string>>;
  readonly #focus = new Cell<string | undefined>(undefined);
  readonly #view: Cell<ViewMode>;
  readonly #sort: Cell<SortOrder>;
  readonly #tree = new Cell<readonly TreeRow[]>([]);
  readonly #operations = new Cell<readonly PendingOperation[]>([]);
  readonly #errors = new Cell<readonly FileManagerError[]>([]);
  readonly #clipboard = new Cell<FileClipboard | undefined>(undefined);
  readonly #renaming = new Cell<string | undefined>(undefined);

  readonly #listings = new Map<string, Cell<DirectoryListing>>();
  readonly #loads = new Map<string, AbortController>();
  readonly #expanded = new Set<string>();
  #indexByPath = new Map<string, number>();
  #sortedFrom: readonly FileEntry[] | undefined;
  #anchor: string | undefined;
  #started = false;
  #unwatch: (() => void) | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #staleDirectories = new Set<string>();
  #nextId = 1;

  constructor(options: FileManagerStoreOptions) {
    this.#service = options.service;
    this.root = normalizePath("/", options.root ?? "/workspace");
    this.#refreshDelayMs = options.refreshDelayMs ?? 150;
    const initial = normalizePath(this.root, options.initialPath ?? this.root);
    this.#path = new Cell(isWithin(initial, this.root) ? initial : this.root);
    this.#view = new Cell(options.initialView ?? "list");
    this.#sort = new Cell(options.initialSort ?? { key: "name", direction: "asc" });
    this.#selection = new Cell<ReadonlySet<string>>(new Set(options.initialSelection ?? []));
    for (const directory of pathTrail(this.root, this.#path.get())) this.#expanded.add(directory);
    this.#rebuildTree();
  }

  // ---------------------------------------------------------------------------------------
  // Reading: one cell per piece of state

  /** The folder shown. */
  get path(): ReadonlyCell<string> {
    return this.#path;
  }
  /** The current folder's entries in the current sort. */
  get entries(): ReadonlyCell<readonly FileEntry[]> {
    return this.#entries;
  }
  get selection(): ReadonlyCell<ReadonlySet<string>> {
    return this.#selection;
  }
  /** The active item of the content (the roving tab stop), by path. */
  get focus(): ReadonlyCell<string | undefined> {
    return this.#focus;
  }
  get view(): ReadonlyCell<ViewMode> {
    return this.#view;
  }
  get sort(): ReadonlyCell<SortOrder> {
    return this.#sort;
  }
  /** The folder tree's visible rows, in order. */
  get tree(): ReadonlyCell<readonly TreeRow[]> {
    return this.#tree;
  }
  get operations(): ReadonlyCell<readonly PendingOperation[]> {
    return this.#operations;
  }
  get errors(): ReadonlyCell<readonly FileManagerError[]> {
    return this.#errors;
  }
  get clipboard(): ReadonlyCell<FileClipboard | undefined> {
    return this.#clipboard;
  }
  /** The entry being renamed inline. */
  get renaming(): ReadonlyCell<string | undefined> {
    return this.#renaming;
  }

  /** A folder's listing (idle until something asks for it). */
  listing(path: string): ReadonlyCell<DirectoryListing> {
    return this.#listingCell(path);
  }

  /** Where `path` is in the current entries, or -1. */
  indexOf(path: string | undefined): number {
    return path === undefined ? -1 : (this.#indexByPath.get(path) ?? -1);
  }

  // ---------------------------------------------------------------------------------------
  // Life: reading and following the service

  /** Reads what is shown and follows the sandbox's file events until {@link stop}. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#unwatch = this.#service.watch((changes) => this.#onChanges(changes));
    for (const directory of new Set([
      ...pathTrail(this.root, this.#path.get()),
      ...this.#expanded,
    ])) {
      if (this.#listingCell(directory).get().status !== "loaded") void this.#load(directory);
    }
  }

  stop(): void {
    this.#started = false;
    this.#unwatch?.();
    this.#unwatch = undefined;
    for (const load of this.#loads.values()) load.abort();
    this.#loads.clear();
    if (this.#refreshTimer !== undefined) clearTimeout(this.#refreshTimer);
    this.#refreshTimer = undefined;
  }

  /** Reads the current folder again. */
  refresh(path = this.#path.get()): Promise<void> {
    return this.#load(path);
  }

  // ---------------------------------------------------------------------------------------
  // Navigation and the tree

  /** Shows `path` (asks the owner first when it holds the path). */
  navigate(path: string): void {
    const target = normalizePath(this.root, path);
    if (!isWithin(target, this.root) || target === this.#path.get()) return;
    if (!this.callbacks.pathControlled) this.#setPath(target);
    this.callbacks.onPathChange?.(target);
  }

  /** The owner's path, when it holds it. */
  syncPath(path: string): void {
    const target = normalizePath(this.root, path);
    if (isWithin(target, this.root)) this.#setPath(target);
  }

  /** To the folder above, unless at the root. */
  goUp(): void {
    const path = this.#path.get();
    if (path !== this.root) this.navigate(parentOf(path));
  }

  /** Opens a folder, or hands a file to `onOpenFile`. */
  open(entry: FileEntry): void {
    if (entry.type === "directory") this.navigate(entry.path);
    else this.callbacks.onOpenFile?.(entry);
  }

  expand(path: string): void {
    if (this.#expanded.has(path)) return;
    this.#expanded.add(path);
    this.#ensureLoaded(path);
    this.#rebuildTree();
  }

  collapse(path: string): void {
    if (!this.#expanded.delete(path)) return;
    this.#rebuildTree();
  }

  // ---------------------------------------------------------------------------------------
  // Sort and view

  setSort(order: SortOrder): void {
    this.#sort.set(order);
    this.#updateEntries(true);
  }

  /** Sorts by `key`; the same key again flips the direction. */
  toggleSort(key: SortKey): void {
    const sort = this.#sort.get();
    this.setSort({
      ...sort,
      key,
      direction: sort.key === key && sort.direction === "asc" ? "desc" : "asc",
    });
  }

  /** Switches the view (asks the owner first when it holds the view). */
  setView(view: ViewMode): void {
    if (view === this.#view.get()) return;
    if (!this.callbacks.viewControlled) this.#view.set(view);
    this.callbacks.onViewChange?.(view);
  }

  /** The owner's view, when it holds it. */
  syncView(view: ViewMode): void {
    this.#view.set(view);
  }

  // ---------------------------------------------------------------------------------------
  // Selection and focus

  /** Selects as a click does: alone, toggled (Ctrl/Cmd) or as a range from the anchor (Shift). */
  select(path: string, mode: SelectMode = "replace"): void {
    const selection = this.#selection.get();
    let next: Set<string>;
    if (mode === "toggle") {
      next = new Set(selection);
      if (!next.delete(path)) next.add(path);
      this.#anchor = path;
    } else if (mode === "range" && this.#anchor !== undefined && this.indexOf(this.#anchor) >= 0) {
      next = this.#range(this.#anchor, path);
    } else {
      next = new Set([path]);
      this.#anchor = path;
    }
    this.#focus.set(path);
    this.#commitSelection(next);
  }

  selectAll(): void {
    this.#commitSelection(new Set(this.#entries.get().map((entry) => entry.path)));
  }

  clearSelection(): void {
    this.#commitSelection(emptySet);
  }

  /** The owner's selection, when it holds it. */
  syncSelection(paths: readonly string[]): void {
    const next = new Set(paths);
    if (!sameSet(next, this.#selection.get())) this.#selection.set(next);
  }

  /** Moves the active item only (Ctrl+arrows), or the selection with it. */
  focusIndex(index: number, mode: "focus" | SelectMode = "focus"): void {
    const entries = this.#entries.get();
    if (entries.length === 0) return;
    const entry = entries[Math.max(0, Math.min(entries.length - 1, index))] as FileEntry;
    if (mode === "focus") this.#focus.set(entry.path);
    else this.select(entry.path, mode);
  }

  // ---------------------------------------------------------------------------------------
  // Changes

  startRename(path = this.#focus.get()): void {
    if (path !== undefined) this.#renaming.set(path);
  }

  cancelRename(): void {
    this.#renaming.set(undefined);
  }

  /** Why `path` cannot be renamed to `name`, or undefined. */
  renameProblem(path: string, name: string): string | undefined {
    return nameProblem(name, this.#listingCell(parentOf(path)).get().entries, baseName(path));
  }

  /** Renames; false when the name is refused or the service failed (see `errors`). */
  async rename(path: string, name: string): Promise<boolean> {
    if (this.renameProblem(path, name) !== undefined) return false;
    this.#renaming.set(undefined);
    if (name === baseName(path)) return true;
    const target = joinPath(parentOf(path), name);
    const done = await this.#run("rename", [path], async () => {
      await this.#service.move(path, target);
      this.#forget(path);
      await this.#load(parentOf(path));
    });
    if (done) this.#replaceSelection(target);
    return done;
  }

  /** Makes a folder in the current one (named "New folder", "New folder 2" … by default). */
  async createFolder(
    name?: string,
    options: { rename?: boolean } = {},
  ): Promise<string | undefined> {
    const directory = this.#path.get();
    const siblings = this.#listingCell(directory).get().entries;
    const folderName = name ?? freeName("New folder", siblings);
    const problem = nameProblem(folderName, siblings);
    const path = joinPath(directory, folderName);
    if (problem !== undefined) {
      this.#report("create-folder", path, problem);
      return undefined;
    }
    const done = await this.#run("create-folder", [path], async () => {
      await this.#service.makeDirectory(path);
      await this.#load(directory);
    });
    if (!done) return undefined;
    this.#replaceSelection(path);
    if (options.rename) this.#renaming.set(path);
    return path;
  }

  /** Deletes each path (folders with what they hold); those that fail are reported each. */
  async remove(paths: readonly string[]): Promise<boolean> {
    const results = await Promise.all(
      paths.map((path) =>
        this.#run("delete", [path], async () => {
          await this.#service.remove(path);
          this.#forget(path);
        }),
      ),
    );
    await this.#reloadAll(paths.map(parentOf));
    return results.every(Boolean);
  }

  /** Moves each path into `directory`, keeping its name. */
  async move(paths: readonly string[], directory: string): Promise<boolean> {
    const target = normalizePath(this.root, directory);
    const existing = this.#listingCell(target).get().entries;
    const results = await Promise.all(
      paths
        .filter((path) => parentOf(path) !== target)
        .map((path) => {
          if (isWithin(target, path)) {
            this.#report("move", path, `a folder cannot be moved into itself (${target})`);
            return false;
          }
          if (existing.some((entry) => entry.name === baseName(path))) {
            this.#report("move", path, `“${baseName(path)}” already exists in ${target}`);
            return false;
          }
          return this.#run("move", [path], async () => {
            await this.#service.move(path, joinPath(target, baseName(path)));
            this.#forget(path);
          });
        }),
    );
    await this.#reloadAll([target, ...paths.map(parentOf)]);
    return results.every(Boolean);
  }

  /** Ctrl+X: remembers the paths (the selection by default) for a paste. */
  cut(paths: readonly string[] = [...this.#selection.get()]): void {
    this.#clipboard.set(paths.length === 0 ? undefined : { paths });
  }

  /** Ctrl+V: moves what was cut into `directory` (the current folder by default). */
  async paste(directory = this.#path.get()): Promise<boolean> {
    const clipboard = this.#clipboard.get();
    if (clipboard === undefined) return false;
    this.#clipboard.set(undefined);
    return this.move(clipboard.paths, directory);
  }

  /** Writes files into `directory`; a name already there gets " 2", " 3" … before its extension. */
  async upload(
    files: Iterable<{ readonly name: string } & Blob>,
    directory = this.#path.get(),
  ): Promise<boolean> {
    const taken = [...this.#listingCell(directory).get().entries];
    const results: Promise<boolean>[] = [];
    for (const file of files) {
      const name = freeFileName(file.name, taken);
      taken.push({ name, path: "", type: "file", size: 0, mtime: "" });
      const path = joinPath(directory, name);
      results.push(this.#run("upload", [path], () => this.#service.upload(path, file)));
    }
    const done = (await Promise.all(results)).every(Boolean);
    await this.#reloadAll([directory]);
    return done;
  }

  /** A signed GET URL of a file, or undefined when the service refused (reported). */
  async downloadUrl(path: string): Promise<string | undefined> {
    let url: string | undefined;
    await this.#run("download", [path], async () => {
      const signed = await this.#service.downloadUrl(path);
      // The link is clicked in the page's origin: http(s) only, whatever a service answered (a
      // FileService of the app's own, too; the kit's checks the URL is the service's origin).
      if (!/^https?:\/\//i.test(signed)) {
        throw new Error("the download link is not an http(s) URL");
      }
      url = signed;
    });
    return url;
  }

  dismissError(id: number): void {
    this.#errors.set(this.#errors.get().filter((error) => error.id !== id));
  }

  // ---------------------------------------------------------------------------------------
  // Inside

  #listingCell(path: string): Cell<DirectoryListing> {
    let cell = this.#listings.get(path);
    if (cell === undefined) {
      cell = new Cell(idle(path));
      this.#listings.set(path, cell);
    }
    return cell;
  }

  #ensureLoaded(path: string): void {
    const status = this.#listingCell(path).get().status;
    if (this.#started && (status === "idle" || status === "error")) void this.#load(path);
  }

  async #load(path: string): Promise<void> {
    this.#loads.get(path)?.abort();
    const abort = new AbortController();
    this.#loads.set(path, abort);
    const cell = this.#listingCell(path);
    const before = cell.get();
    const shown = before.status === "loaded";
    cell.set({
      ...before,
      status: shown ? "loaded" : "loading",
      refreshing: shown,
      error: undefined,
    });
    this.#listingChanged(path);
    try {
      const entries = await this.#service.list(path, abort.signal);
      if (abort.signal.aborted) return;
      cell.set({ path, status: "loaded", entries, refreshing: false, error: undefined });
      // A folder read at last: the alert that it could not be is no longer true.
      const stale = this.#errors.get().filter((old) => old.action === "open" && old.path === path);
      if (stale.length > 0) {
        this.#errors.set(this.#errors.get().filter((old) => !stale.includes(old)));
      }
    } catch (error) {
      if (abort.signal.aborted || isAbort(error)) return;
      const failure = this.#report("open", path, error);
      cell.set({
        path,
        status: "error",
        entries: before.entries,
        refreshing: false,
        error: failure,
      });
    } finally {
      if (this.#loads.get(path) === abort) this.#loads.delete(path);
    }
    this.#listingChanged(path);
  }

  async #reloadAll(paths: readonly string[]): Promise<void> {
    const known = [...new Set(paths)].filter(
      (path) => this.#listingCell(path).get().status !== "idle",
    );
    await Promise.all(known.map((path) => this.#load(path)));
  }

  #listingChanged(path: string): void {
    if (path === this.#path.get()) this.#updateEntries(false);
    if (this.#expanded.has(path)) this.#rebuildTree();
  }

  #setPath(target: string): void {
    const previous = this.#path.get();
    if (target === previous) return;
    this.#path.set(target);
    for (const directory of pathTrail(this.root, target)) {
      if (directory !== target) this.#expanded.add(directory);
      this.#ensureLoaded(directory);
    }
    this.#anchor = undefined;
    this.#sortedFrom = undefined;
    this.#updateEntries(true);
    // Back up a level: the folder just left stays the active item, as in a desktop manager.
    const cameFrom = isWithin(previous, target) ? pathTrail(target, previous)[1] : undefined;
    this.#focus.set(cameFrom);
    this.#commitSelection(emptySet);
    this.#rebuildTree();
  }

  #updateEntries(force: boolean): void {
    const listing = this.#listingCell(this.#path.get()).get();
    if (!force && listing.entries === this.#sortedFrom) return;
    this.#sortedFrom = listing.entries;
    const sorted = sortEntries(listing.entries, this.#sort.get());
    this.#indexByPath = new Map(sorted.map((entry, index) => [entry.path, index]));
    this.#entries.set(sorted);
    if (listing.status !== "loaded") return;
    // Entries that went away leave the selection; the active item moves to a neighbour.
    const selection = this.#selection.get();
    const kept = [...selection].filter((path) => this.#indexByPath.has(path));
    if (kept.length !== selection.size) this.#commitSelection(new Set(kept));
    const focus = this.#focus.get();
    if (focus !== undefined && !this.#indexByPath.has(focus)) {
      this.#focus.set(sorted[Math.min(sorted.length - 1, this.#focusIndexBefore(focus))]?.path);
    }
    const renaming = this.#renaming.get();
    if (renaming !== undefined && !this.#indexByPath.has(renaming)) this.#renaming.set(undefined);
  }

  /** Where a vanished entry was, by name among the current ones. */
  #focusIndexBefore(path: string): number {
    const name = baseName(path);
    const index = this.#entries.get().findIndex((entry) => compareNames(entry.name, name) > 0);
    return index === -1 ? this.#entries.get().length - 1 : Math.max(0, index - 1);
  }

  #rebuildTree(): void {
    const rows: TreeRow[] = [];
    const visit = (
      path: string,
      name: string,
      level: number,
      setSize: number,
      posInSet: number,
    ) => {
      const listing = this.#listings.get(path)?.get();
      const expanded = this.#expanded.has(path);
      const known =
        listing !== undefined && (listing.status === "loaded" || listing.entries.length > 0);
      const children = known
        ? listing.entries
            .filter((entry) => entry.type === "directory")
            .sort((a, b) => compareNames(a.name, b.name))
        : [];
      rows.push({
        path,
        name,
        level,
        setSize,
        posInSet,
        expanded,
        loading: listing?.status === "loading",
        hasChildren: known ? children.length > 0 : undefined,
      });
      if (!expanded) return;
      for (const [index, child] of children.entries()) {
        visit(child.path, child.name, level + 1, children.length, index + 1);
      }
    };
    visit(this.root, baseName(this.root), 1, 1, 1);
    this.#tree.set(rows);
  }

  #range(from: string, to: string): Set<string> {
    const start = this.indexOf(from);
    const end = this.indexOf(to);
    const [low, high] = start <= end ? [start, end] : [end, start];
    return new Set(
      this.#entries
        .get()
        .slice(low, high + 1)
        .map((entry) => entry.path),
    );
  }

  #replaceSelection(path: string): void {
    this.#anchor = path;
    this.#focus.set(path);
    this.#commitSelection(new Set([path]));
  }

  #commitSelection(next: ReadonlySet<string>): void {
    if (sameSet(next, this.#selection.get())) return;
    if (!this.callbacks.selectionControlled) this.#selection.set(next);
    this.callbacks.onSelectionChange?.([...next]);
  }

  /** Drops what is known below a path that went away. */
  #forget(path: string): void {
    for (const [known, cell] of this.#listings) {
      if (isWithin(known, path)) {
        this.#loads.get(known)?.abort();
        cell.set(idle(known));
      }
    }
    for (const expanded of [...this.#expanded]) {
      if (isWithin(expanded, path)) this.#expanded.delete(expanded);
    }
    this.#rebuildTree();
    const current = this.#path.get();
    if (isWithin(current, path) && path !== this.root) this.navigate(parentOf(path));
  }

  #onChanges(changes: ReadonlyArray<{ path: string; change: string }>): void {
    for (const { path, change } of changes) {
      if (!isWithin(path, this.root)) continue;
      if (change === "deleted") this.#forget(path);
      const parent = parentOf(path);
      if (this.#listingCell(parent).get().status !== "idle") this.#staleDirectories.add(parent);
    }
    if (this.#staleDirectories.size === 0 || this.#refreshTimer !== undefined) return;
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = undefined;
      const stale = [...this.#staleDirectories];
      this.#staleDirectories.clear();
      void this.#reloadAll(stale);
    }, this.#refreshDelayMs);
  }

  async #run(action: FileAction, paths: readonly string[], work: () => Promise<unknown>) {
    const operation = { id: this.#nextId++, action, paths };
    this.#operations.set([...this.#operations.get(), operation]);
    try {
      await work();
      return true;
    } catch (error) {
      this.#report(action, paths[0] ?? "", error);
      return false;
    } finally {
      this.#operations.set(this.#operations.get().filter((pending) => pending !== operation));
    }
  }

  #report(action: FileAction, path: string, error: unknown): FileManagerError {
    const answer = error as { status?: unknown; code?: unknown; message?: unknown };
    const detail =
      typeof error === "string"
        ? error
        : typeof answer?.message === "string"
          ? answer.message
          : String(error);
    const failure: FileManagerError = {
      id: this.#nextId++,
      action,
      path,
      status: typeof answer?.status === "number" ? answer.status : undefined,
      code: typeof answer?.code === "string" ? answer.code : undefined,
      detail,
      // The name once, shortened when long: the service's sentence may name it (or its path) too.
      message: `Could not ${verbs[action]} “${shownName(baseName(path))}”: ${mentioning(detail, baseName(path))}`,
    };
    // The latest few: an error that repeats does not pile up.
    this.#errors.set(
      [...this.#errors.get().filter((old) => old.message !== failure.message), failure].slice(-4),
    );
    return failure;
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const value of a) if (!b.has(value)) return false;
  return true;
}

/** `name`, or `stem 2.ext`, `stem 3.ext` … whichever is free. */
function freeFileName(name: string, siblings: readonly FileEntry[]): string {
  const taken = new Set(siblings.map((entry) => entry.name));
  if (!taken.has(name)) return name;
  const dot = name.lastIndexOf(".");
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let index = 2; ; index++) {
    const candidate = `${stem} ${index}${extension}`;
    if (!taken.has(candidate)) return candidate;
  }
}
