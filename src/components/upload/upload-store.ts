import { type CairnConnection, CairnRequestError } from "../client/connection.js";
import { type FileEntry, makeDirectory, statFile, uploadFile } from "../client/files.js";
import { mentioning, shownName } from "../file-manager/format.js";
import { limitViolation, tooManyFiles, type UploadLimits } from "./limits.js";
import { backoffDelay, parentOf, renamedPath, targetPath } from "./paths.js";

export type UploadState = "queued" | "uploading" | "done" | "failed" | "cancelled" | "skipped";

/** One file of the queue. A new object on each change, so it can be compared by identity. */
export interface UploadItem {
  readonly id: string;
  readonly file: Blob;
  /** The file's own name. */
  readonly name: string;
  /** Its path inside a dropped folder ("photos/2024/a.png"), or its name. */
  readonly relativePath: string;
  /** Where it goes (or went) in the sandbox: after a rename, the new name. */
  readonly path: string;
  readonly state: UploadState;
  /** Bytes sent so far, of `total`. */
  readonly loaded: number;
  readonly total: number;
  /** Attempts started so far. */
  readonly attempts: number;
  /** Why it failed or was skipped; while an automatic retry waits, when it comes. */
  readonly message?: string | undefined;
  /** False for a file refused by a limit: retrying cannot help. */
  readonly retryable: boolean;
  /** Set while an automatic retry waits (epoch ms). */
  readonly retryAt?: number | undefined;
}

/** Writes a file to a sandbox path with progress: `uploadFile` by default, a fake in stories. */
export type Uploader = (
  connection: CairnConnection,
  sandboxId: string,
  path: string,
  file: Blob,
  options: { onProgress?: (loaded: number, total: number) => void; signal?: AbortSignal },
) => Promise<{ path: string; bytes: number }>;

/** What to do when the target path already exists. */
export type ConflictPolicy = "overwrite" | "rename" | "skip";

/** A file to add, with its path inside a dropped folder. */
export interface UploadInput {
  readonly file: Blob & { readonly name: string };
  readonly relativePath?: string | undefined;
}

export interface UploadStoreOptions extends UploadLimits {
  readonly connection?: CairnConnection | undefined;
  readonly sandboxId?: string | undefined;
  /** Where files go; default /workspace. */
  readonly directory?: string | undefined;
  /** At most this many files in the list (files past it are refused, with a message). */
  readonly maxFiles?: number | undefined;
  /** Default "rename" ("report (1).pdf"): nothing in the sandbox is lost by default. */
  readonly conflict?: ConflictPolicy | undefined;
  /** Uploads at once; default 3. */
  readonly concurrency?: number | undefined;
  /** Attempts made by themselves for a network error or a 5xx, before a retry button; default 3. */
  readonly attempts?: number | undefined;
  /** The first automatic retry waits this long, doubling after; default 1000 ms. */
  readonly retryDelayMs?: number | undefined;
  readonly uploader?: Uploader | undefined;
  /** Called with the sandbox path of each file uploaded. */
  readonly onUploaded?: ((path: string, item: UploadItem) => void) | undefined;
  /** Called when nothing is left to send (every file done, failed, cancelled or skipped). */
  readonly onComplete?: ((items: readonly UploadItem[]) => void) | undefined;
}

type Listener = () => void;

const settled = new Set<UploadState>(["done", "failed", "cancelled", "skipped"]);

/** Errors that a later attempt may not meet: no answer at all (a TypeError from fetch), 5xx, 408, 429. */
function isTransient(error: unknown): boolean {
  if (!(error instanceof CairnRequestError)) return error instanceof TypeError;
  // A signed URL that is not the service's own would come back the same way.
  if (error.code === "bad_signed_url") return false;
  return error.status === 0 || error.status >= 500 || error.status === 408 || error.status === 429;
}

const isAbort = (error: unknown) => error instanceof DOMException && error.name === "AbortError";

let counter = 0;

/**
 * A queue of uploads into a sandbox, framework-free: at most `concurrency` at once, automatic
 * retries with backoff for transient failures, limits checked before sending, a conflict policy
 * checked with a stat, parent directories made for dropped folders. Each file has its own
 * subscription, so its progress re-renders its row only.
 *
 * @example
 * const store = new UploadStore({ connection, sandboxId, maxFileSize: 10 * 1024 * 1024 });
 * store.add([...input.files]);
 */
export class UploadStore {
  #options: UploadStoreOptions;
  #ids: readonly string[] = [];
  readonly #items = new Map<string, UploadItem>();
  readonly #controllers = new Map<string, AbortController>();
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Paths promised to uploads in flight (path → file id): two files never take one name. */
  readonly #reserved = new Map<string, string>();
  /** Directories made (or being made) this session, shared by the files inside them. */
  readonly #directories = new Map<string, Promise<unknown>>();
  #announcement = "";
  #active = false;
  readonly #listeners = new Set<Listener>();
  readonly #itemListeners = new Map<string, Set<Listener>>();
  readonly #announcementListeners = new Set<Listener>();
  readonly #allListeners = new Set<Listener>();
  #itemsSnapshot: readonly UploadItem[] | undefined;
  #settledCount: number | undefined;

  constructor(options: UploadStoreOptions = {}) {
    this.#options = options;
  }

  /** Replaces the options (a component passes its props here on each change). */
  setOptions(options: UploadStoreOptions): void {
    this.#options = options;
    this.#pump();
  }

  get options(): UploadStoreOptions {
    return this.#options;
  }

  // ── Reading ────────────────────────────────────────────────────────────────────────────────

  /** Called when a file is added or removed (not on progress). */
  subscribe = (listener: Listener): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** The ids of the files, in the order added; a new array only when one is added or removed. */
  getIds = (): readonly string[] => this.#ids;

  subscribeItem = (id: string, listener: Listener): (() => void) => {
    const set = this.#itemListeners.get(id) ?? new Set<Listener>();
    this.#itemListeners.set(id, set);
    set.add(listener);
    return () => set.delete(listener);
  };

  getItem = (id: string): UploadItem | undefined => this.#items.get(id);

  /** Called on any change of any file (progress included): read it through a small snapshot. */
  subscribeAll = (listener: Listener): (() => void) => {
    this.#allListeners.add(listener);
    return () => this.#allListeners.delete(listener);
  };

  /** How many files are finished (done, failed, cancelled or skipped). */
  getSettledCount = (): number => {
    // Counted again only after a state changed, not on each progress event.
    this.#settledCount ??= this.getItems().filter((item) => settled.has(item.state)).length;
    return this.#settledCount;
  };

  /** Every file, in order: a new array on any change. */
  getItems = (): readonly UploadItem[] => {
    this.#itemsSnapshot ??= this.#ids.flatMap((id) => this.#items.get(id) ?? []);
    return this.#itemsSnapshot;
  };

  /**
   * A sentence for a screen reader's polite live region: a file at 25, 50 and 75 %, done,
   * failed or refused, and everything finished — never each percent.
   */
  subscribeAnnouncement = (listener: Listener): (() => void) => {
    this.#announcementListeners.add(listener);
    return () => this.#announcementListeners.delete(listener);
  };

  getAnnouncement = (): string => this.#announcement;

  // ── Acting ─────────────────────────────────────────────────────────────────────────────────

  /** Adds files; those over a limit are listed as failed with the limit named. Returns their ids. */
  add(inputs: Iterable<UploadInput | (Blob & { readonly name: string })>): string[] {
    const { maxFiles } = this.#options;
    let counted = this.getItems().filter((item) => item.retryable).length;
    const added: UploadItem[] = [];
    const refused: string[] = [];
    for (const input of inputs) {
      const { file, relativePath } = "file" in input ? input : { file: input, relativePath: "" };
      const relative = relativePath || file.name;
      const target = targetPath(this.#directory(), relative);
      const refusal =
        "problem" in target
          ? `${file.name} cannot be uploaded: ${target.problem}`
          : maxFiles !== undefined && counted >= maxFiles
            ? tooManyFiles(file.name, maxFiles)
            : limitViolation(file, this.#options);
      // The name once, and a long one cut in its middle: the row shows it beside the message.
      const over = refusal === undefined ? undefined : mentioning(refusal, file.name);
      if (over === undefined) counted += 1;
      else refused.push(over);
      counter += 1;
      added.push({
        id: `upload-${counter}`,
        file,
        name: file.name,
        relativePath: relative,
        path: "path" in target ? target.path : this.#directory(),
        state: over === undefined ? "queued" : "failed",
        loaded: 0,
        total: file.size,
        attempts: 0,
        message: over,
        retryable: over === undefined,
      });
    }
    if (added.length === 0) return [];
    for (const item of added) this.#items.set(item.id, item);
    this.#ids = [...this.#ids, ...added.map((item) => item.id)];
    this.#itemsSnapshot = undefined;
    this.#settledCount = undefined;
    for (const listener of this.#listeners) listener();
    for (const listener of this.#allListeners) listener();
    if (refused.length > 0) this.#announce(refused.join(". "));
    this.#pump();
    return added.map((item) => item.id);
  }

  /** Stops a file: aborts its request, or takes it out of the queue. */
  cancel(id: string): void {
    const item = this.#items.get(id);
    if (item === undefined || settled.has(item.state)) return;
    this.#clearTimer(id);
    this.#controllers.get(id)?.abort();
    this.#controllers.delete(id);
    this.#release(item);
    this.#update(id, { state: "cancelled", retryAt: undefined, message: undefined });
    this.#announce(`${item.name}: upload cancelled`);
    this.#pump();
  }

  /** Queues a failed or cancelled file again, with a fresh set of automatic attempts. */
  retry(id: string): void {
    const item = this.#items.get(id);
    if (item === undefined || !item.retryable) return;
    if (item.state !== "failed" && item.state !== "cancelled") return;
    this.#update(id, { state: "queued", loaded: 0, attempts: 0, message: undefined });
    this.#pump();
  }

  /** Takes a file out of the list (cancelling it first). */
  remove(id: string): void {
    if (!this.#items.has(id)) return;
    this.cancel(id);
    this.#items.delete(id);
    this.#itemListeners.delete(id);
    this.#ids = this.#ids.filter((other) => other !== id);
    this.#itemsSnapshot = undefined;
    this.#settledCount = undefined;
    for (const listener of this.#listeners) listener();
    for (const listener of this.#allListeners) listener();
  }

  /** Takes the finished files (done, skipped, cancelled, failed) out of the list. */
  clearFinished(): void {
    for (const id of this.#ids) {
      const item = this.#items.get(id);
      if (item !== undefined && settled.has(item.state)) this.remove(id);
    }
  }

  /** Aborts the requests in flight and the waiting retries, silently (a component unmounting). */
  dispose(): void {
    for (const id of [...this.#timers.keys()]) this.#clearTimer(id);
    for (const [id, controller] of this.#controllers) {
      controller.abort();
      this.#update(id, { state: "cancelled" });
    }
    this.#controllers.clear();
    for (const id of this.#ids) {
      if (this.#items.get(id)?.state === "queued") this.#update(id, { state: "cancelled" });
    }
  }

  // ── Inside ─────────────────────────────────────────────────────────────────────────────────

  #directory(): string {
    return this.#options.directory ?? "/workspace";
  }

  #update(id: string, change: Partial<UploadItem>): UploadItem | undefined {
    const item = this.#items.get(id);
    if (item === undefined) return undefined;
    const next = { ...item, ...change };
    this.#items.set(id, next);
    this.#itemsSnapshot = undefined;
    if (next.state !== item.state) this.#settledCount = undefined;
    for (const listener of this.#itemListeners.get(id) ?? []) listener();
    for (const listener of this.#allListeners) listener();
    return next;
  }

  #announce(sentence: string): void {
    this.#announcement = sentence;
    for (const listener of this.#announcementListeners) listener();
  }

  #release(item: UploadItem): void {
    if (this.#reserved.get(item.path) === item.id) this.#reserved.delete(item.path);
  }

  #clearTimer(id: string): void {
    const timer = this.#timers.get(id);
    if (timer !== undefined) clearTimeout(timer);
    this.#timers.delete(id);
  }

  #pump(): void {
    const { connection, sandboxId } = this.#options;
    if (connection === undefined || sandboxId === undefined) return;
    const limit = Math.max(1, this.#options.concurrency ?? 3);
    let running = this.#controllers.size;
    for (const id of this.#ids) {
      if (running >= limit) break;
      const item = this.#items.get(id);
      if (item?.state !== "queued" || item.retryAt !== undefined) continue;
      running += 1;
      this.#active = true;
      void this.#send(id, connection, sandboxId);
    }
    this.#maybeComplete();
  }

  #maybeComplete(): void {
    if (!this.#active) return;
    const items = this.getItems();
    if (items.some((item) => !settled.has(item.state))) return;
    this.#active = false;
    const done = items.filter((item) => item.state === "done").length;
    const failed = items.filter((item) => item.state === "failed").length;
    // One file's own sentence said it all.
    if (items.length > 1)
      this.#announce(
        failed > 0
          ? `Uploads finished: ${done} uploaded, ${failed} failed`
          : `All uploads finished: ${done} uploaded`,
      );
    this.#options.onComplete?.(items);
  }

  async #send(id: string, connection: CairnConnection, sandboxId: string): Promise<void> {
    const controller = new AbortController();
    this.#controllers.set(id, controller);
    const started = this.#update(id, {
      state: "uploading",
      loaded: 0,
      attempts: (this.#items.get(id)?.attempts ?? 0) + 1,
      message: undefined,
    });
    if (started === undefined) return;
    const { signal } = controller;
    let step = 0;
    try {
      const path = await this.#resolvePath(started, connection, sandboxId);
      if (signal.aborted) return;
      if (path === undefined) {
        this.#update(id, {
          state: "skipped",
          message: mentioning(
            `${started.relativePath} already exists in ${this.#directory()}; skipped`,
            started.relativePath,
          ),
        });
        this.#announce(`${started.name} skipped: it already exists`);
        return;
      }
      this.#update(id, { path });
      await this.#makeParents(path, connection, sandboxId);
      const uploader = this.#options.uploader ?? uploadFile;
      const result = await uploader(connection, sandboxId, path, started.file, {
        signal,
        onProgress: (loaded, total) => {
          if (signal.aborted) return;
          this.#update(id, { loaded, total });
          const reached = total > 0 ? Math.floor((loaded / total) * 4) : 0;
          if (reached > step && reached < 4) {
            step = reached;
            this.#announce(`${started.name}: ${reached * 25}% uploaded`);
          }
        },
      });
      if (signal.aborted) return;
      const done = this.#update(id, {
        state: "done",
        path: result.path,
        loaded: started.total,
        total: started.total,
      });
      this.#announce(`${started.name} uploaded to ${result.path}`);
      if (done !== undefined) this.#options.onUploaded?.(result.path, done);
    } catch (error) {
      if (signal.aborted || isAbort(error)) {
        if (!signal.aborted) this.#update(id, { state: "cancelled" });
        return;
      }
      this.#failed(id, error);
    } finally {
      if (this.#controllers.get(id) === controller) this.#controllers.delete(id);
      const item = this.#items.get(id);
      if (item !== undefined && settled.has(item.state)) this.#release(item);
      this.#pump();
    }
  }

  #failed(id: string, error: unknown): void {
    const item = this.#items.get(id);
    if (item === undefined) return;
    const said = error instanceof Error ? error.message : String(error);
    // The service's sentence may name the file (its whole path): once, and shortened.
    const reason = mentioning(said, item.name);
    const attempts = Math.max(1, this.#options.attempts ?? 3);
    if (isTransient(error) && item.attempts < attempts) {
      const delay = backoffDelay(item.attempts, this.#options.retryDelayMs ?? 1000);
      this.#update(id, {
        state: "queued",
        retryAt: Date.now() + delay,
        message: `${reason}; retrying in ${Math.ceil(delay / 1000)} s (attempt ${item.attempts + 1} of ${attempts})`,
      });
      this.#timers.set(
        id,
        setTimeout(() => {
          this.#timers.delete(id);
          this.#update(id, { retryAt: undefined });
          this.#pump();
        }, delay),
      );
      return;
    }
    // A refusal that another try would meet again (400, 403, 404, 409, 413) offers no Retry.
    const status = (error as { status?: unknown } | undefined)?.status;
    const permanent =
      (error instanceof CairnRequestError && error.code === "bad_signed_url") ||
      (typeof status === "number" && status >= 400 && status < 500 && ![408, 429].includes(status));
    this.#update(id, { state: "failed", message: reason, retryable: !permanent });
    this.#announce(
      said.includes(item.name)
        ? `Upload failed: ${reason}`
        : `${shownName(item.name)} failed: ${reason}`,
    );
  }

  /** The path to write, after the conflict policy; undefined: skip it. */
  async #resolvePath(
    item: UploadItem,
    connection: CairnConnection,
    sandboxId: string,
  ): Promise<string | undefined> {
    const target = targetPath(this.#directory(), item.relativePath);
    if (!("path" in target)) throw new Error(target.problem);
    const wanted = target.path;
    const policy = this.#options.conflict ?? "rename";
    if (policy === "overwrite") return wanted;
    // An automatic retry keeps the name its first attempt chose (and still holds).
    if (item.attempts > 1) return item.path;
    for (let n = 0; n < 1000; n++) {
      const candidate = n === 0 ? wanted : renamedPath(wanted, n);
      const holder = this.#reserved.get(candidate);
      // Reserved before the stat: another file of the drop asking meanwhile moves on.
      if (holder === undefined || holder === item.id) {
        this.#reserved.set(candidate, item.id);
        if (!(await exists(connection, sandboxId, candidate))) return candidate;
        this.#reserved.delete(candidate);
      }
      if (policy === "skip") return undefined;
    }
    throw new Error(`${item.name}: no free name after ${wanted} (1) … (999)`);
  }

  /** A file of a dropped folder, or one going to a directory not made yet: mkdir -p, once each. */
  async #makeParents(path: string, connection: CairnConnection, sandboxId: string): Promise<void> {
    const parent = parentOf(path);
    if (parent === "/workspace") return;
    let made = this.#directories.get(parent);
    if (made === undefined) {
      made = makeDirectory(connection, sandboxId, parent);
      this.#directories.set(parent, made);
      // A failure is that file's; the next file of the folder tries again.
      made.catch(() => this.#directories.delete(parent));
    }
    await made;
  }
}

async function exists(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
): Promise<boolean> {
  try {
    const entry: FileEntry = await statFile(connection, sandboxId, path);
    return entry !== undefined;
  } catch (error) {
    if (error instanceof CairnRequestError && error.status === 404) return false;
    throw error;
  }
}
