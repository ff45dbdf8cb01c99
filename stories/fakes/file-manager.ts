// An in-memory sandbox files service, answering as the real one does (same paths, statuses and
// JSON bodies as src/server/sandboxes/files-routes.ts, signed-url-routes.ts and the events
// route), given to the kit as a connection's `fetch`.
import type { CairnConnection } from "../../src/components/client/connection.js";
import type { FileChange, FileEntry } from "../../src/components/client/index.js";

const workspace = "/workspace";

interface Node {
  readonly type: "file" | "directory";
  bytes: Uint8Array;
  mtime: string;
}

/** An answer the service gives instead of doing the work, for error states. */
export interface FakeFailure {
  /** Which call fails: a method and the route after /files (e.g. "GET", "" for a listing). */
  readonly method?: string | undefined;
  readonly route?: "" | "/stat" | "/mkdir" | "/move" | "/signed-url" | undefined;
  /** Only for this path (the ?path=, or the body's path/from). */
  readonly path?: string | undefined;
  readonly status: number;
  readonly error: string;
  readonly message: string;
  /** Fail once, then work again. */
  readonly once?: boolean | undefined;
}

export interface FakeFileServiceOptions {
  readonly sandboxId?: string;
  /** Paths (absolute or relative to /workspace) and contents; a value of null is a folder. */
  readonly files?: Readonly<Record<string, string | null>>;
  /** Milliseconds before each answer (default 0). */
  readonly latencyMs?: number;
  /** Listings never answer (the loading state). */
  readonly hangListings?: boolean;
  /** Send a files event after each change made through the API, as the real watcher does. */
  readonly notifyOwnChanges?: boolean;
}

const encoder = new TextEncoder();
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const apiError = (status: number, error: string, message: string) =>
  json(status, { error, message });

/** A fixed clock, so that stories look the same on each run. */
let tick = Date.parse("2025-03-01T09:00:00Z");
const nextTime = () => {
  tick += 60_000;
  return new Date(tick).toISOString();
};

/** A sandbox's /workspace in memory, and the fetch that serves it. */
export class FakeFileService {
  readonly sandboxId: string;
  readonly requests: Array<{ method: string; url: string }> = [];
  readonly #nodes = new Map<string, Node>();
  readonly #streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  readonly #failures: FakeFailure[] = [];
  readonly #options: FakeFileServiceOptions;
  #eventId = 0;

  constructor(options: FakeFileServiceOptions = {}) {
    this.#options = options;
    this.sandboxId = options.sandboxId ?? "sbx_fake";
    this.#nodes.set(workspace, { type: "directory", bytes: new Uint8Array(), mtime: nextTime() });
    for (const [path, content] of Object.entries(options.files ?? {})) {
      if (content === null) this.makeDirectory(path, { notify: false });
      else this.writeFile(path, content, { notify: false });
    }
  }

  /** A connection whose requests this service answers. */
  connection(): CairnConnection {
    return { endpoint: "http://cairn.test", token: "sbt_fake", fetch: this.fetch };
  }

  /** Makes calls fail as the service would (a 403 of a token's scope, a 500 …). */
  fail(failure: FakeFailure): void {
    this.#failures.push(failure);
  }

  /** Paths now present, sorted. */
  paths(): string[] {
    return [...this.#nodes.keys()].sort();
  }

  has(path: string): boolean {
    return this.#nodes.has(absolute(path));
  }

  /** Writes a file as a program in the sandbox would, and tells followers of the events. */
  writeFile(path: string, content: string | Uint8Array, { notify = true } = {}): void {
    const full = absolute(path);
    this.#ensureParents(full);
    const created = !this.#nodes.has(full);
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    this.#nodes.set(full, { type: "file", bytes, mtime: nextTime() });
    if (notify) this.sendFilesEvent([{ path: full, change: created ? "created" : "modified" }]);
  }

  makeDirectory(path: string, { notify = true } = {}): void {
    const full = absolute(path);
    this.#ensureParents(full);
    if (this.#nodes.has(full)) return;
    this.#nodes.set(full, { type: "directory", bytes: new Uint8Array(), mtime: nextTime() });
    if (notify) this.sendFilesEvent([{ path: full, change: "created" }]);
  }

  remove(path: string, { notify = true } = {}): void {
    const full = absolute(path);
    for (const key of [...this.#nodes.keys()]) {
      if (key === full || key.startsWith(`${full}/`)) this.#nodes.delete(key);
    }
    if (notify) this.sendFilesEvent([{ path: full, change: "deleted" }]);
  }

  /** Sends a `files` event to every open event stream. */
  sendFilesEvent(changes: readonly FileChange[]): void {
    this.#send("files", { changes });
  }

  /** Closes every open event stream, as a dropped connection would. */
  dropEventStreams(): void {
    for (const stream of this.#streams) stream.error(new TypeError("network error"));
    this.#streams.clear();
  }

  get openEventStreams(): number {
    return this.#streams.size;
  }

  readonly fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const method = (init.method ?? "GET").toUpperCase();
    this.requests.push({ method, url: `${url.pathname}${url.search}` });
    if ((this.#options.latencyMs ?? 0) > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.#options.latencyMs));
    }
    const headers = new Headers(init.headers);
    if (headers.get("authorization") === null && headers.get("x-api-key") === null) {
      return apiError(401, "unauthorized", "give a sandbox token (Authorization: Bearer)");
    }
    const match = /^\/api\/sandboxes\/([^/]+)\/(files|events)(\/[a-z-]+)?$/.exec(url.pathname);
    if (match === null) return apiError(404, "not_found", `no route ${method} ${url.pathname}`);
    if (decodeURIComponent(match[1] as string) !== this.sandboxId) {
      return apiError(404, "sandbox_not_found", `no sandbox ${match[1]} in this project`);
    }
    if (match[2] === "events") return this.#events(init.signal ?? undefined);
    const route = match[3] ?? "";
    const body =
      typeof init.body === "string" ? (JSON.parse(init.body) as Record<string, string>) : {};
    const named = url.searchParams.get("path") ?? body.path ?? body.from ?? undefined;
    const failure = this.#failures.find(
      (rule) =>
        (rule.method === undefined || rule.method === method) &&
        (rule.route === undefined || rule.route === route) &&
        (rule.path === undefined ||
          (named !== undefined && absolute(named) === absolute(rule.path))),
    );
    if (failure !== undefined) {
      if (failure.once) this.#failures.splice(this.#failures.indexOf(failure), 1);
      return apiError(failure.status, failure.error, failure.message);
    }
    try {
      return await this.#files(method, route, url, body, init);
    } catch (error) {
      if (error instanceof Response) return error;
      throw error;
    }
  };

  async #files(
    method: string,
    route: string,
    url: URL,
    body: Record<string, string>,
    init: RequestInit,
  ): Promise<Response> {
    const queryPath = () => {
      const path = url.searchParams.get("path");
      if (path === null || path === "") {
        throw apiError(400, "invalid_request", "path: give ?path= under /workspace");
      }
      return confined(path);
    };
    const key = `${method} ${route}`;
    if (key === "GET /stat") return json(200, this.#stat(queryPath()));
    if (key === "GET ") {
      const path = queryPath();
      const entry = this.#stat(path);
      if (entry.type === "directory") {
        if (this.#options.hangListings) return new Promise<Response>(() => undefined);
        return json(200, { path, entries: this.#list(path) });
      }
      const node = this.#nodes.get(path) as Node;
      return new Response(node.bytes.slice(), {
        headers: { "content-type": "application/octet-stream", "x-file-size": String(entry.size) },
      });
    }
    if (key === "PUT ") {
      const path = queryPath();
      const parent = this.#nodes.get(parentPath(path));
      if (parent?.type !== "directory") {
        throw apiError(404, "not_found", `write ${path}: no such file or directory`);
      }
      const bytes = new Uint8Array(await new Response(init.body ?? null).arrayBuffer());
      this.#nodes.set(path, { type: "file", bytes, mtime: nextTime() });
      this.#notify([{ path, change: "created" }]);
      return json(201, { path, bytes: bytes.byteLength });
    }
    if (key === "DELETE ") {
      const path = queryPath();
      if (path === workspace) {
        throw apiError(
          400,
          "invalid_request",
          "/workspace itself cannot be deleted; delete what is in it",
        );
      }
      this.#stat(path);
      this.remove(path, { notify: false });
      this.#notify([{ path, change: "deleted" }]);
      return json(200, { path, deleted: true });
    }
    if (key === "POST /mkdir") {
      if (typeof body.path !== "string" || body.path === "") {
        throw apiError(400, "invalid_request", "path: give a path");
      }
      const path = confined(body.path);
      const existing = this.#nodes.get(path);
      if (existing?.type === "file") {
        throw apiError(400, "invalid_request", `mkdir ${path}: File exists`);
      }
      if (existing === undefined) {
        this.#ensureParents(path);
        this.#nodes.set(path, { type: "directory", bytes: new Uint8Array(), mtime: nextTime() });
        this.#notify([{ path, change: "created" }]);
      }
      return json(201, this.#stat(path));
    }
    if (key === "POST /move") {
      if (typeof body.from !== "string" || typeof body.to !== "string") {
        throw apiError(400, "invalid_request", "from, to: give both paths");
      }
      const from = confined(body.from);
      const to = confined(body.to);
      if (from === workspace || to === workspace) {
        throw apiError(400, "invalid_request", "/workspace itself cannot be moved");
      }
      const source = this.#nodes.get(from);
      if (source === undefined) {
        throw apiError(404, "not_found", `move ${from} to ${to}: no such file or directory`);
      }
      if (to.startsWith(`${from}/`)) {
        throw apiError(
          400,
          "invalid_request",
          `move ${from} to ${to}: cannot move a directory into itself`,
        );
      }
      if (this.#nodes.get(parentPath(to))?.type !== "directory") {
        throw apiError(404, "not_found", `move ${from} to ${to}: no such file or directory`);
      }
      const target = this.#nodes.get(to);
      if (target?.type === "directory" && this.#list(to).length > 0) {
        throw apiError(400, "invalid_request", `move ${from} to ${to}: Directory not empty`);
      }
      for (const [path, node] of [...this.#nodes]) {
        if (path === from || path.startsWith(`${from}/`)) {
          this.#nodes.delete(path);
          this.#nodes.set(to + path.slice(from.length), node);
        }
      }
      this.#notify([
        { path: from, change: "deleted" },
        { path: to, change: "created" },
      ]);
      return json(200, this.#stat(to));
    }
    if (key === "POST /signed-url") {
      const path = confined(body.path ?? "");
      this.#stat(path);
      // As the service signs one: its own origin, the path and a signature (not checked here).
      const query = new URLSearchParams({ path, expires: "4102444800", signature: "fake" });
      return json(200, {
        url: `http://cairn.test/api/sandboxes/${this.sandboxId}/files/signed?${query}`,
        method: body.method ?? "GET",
        path,
        expiresAt: new Date(Date.now() + 300_000).toISOString(),
        maxBytes: null,
      });
    }
    return apiError(404, "not_found", `no route ${method} /files${route}`);
  }

  #stat(path: string): FileEntry {
    const node = this.#nodes.get(path);
    if (node === undefined) {
      throw apiError(404, "not_found", `stat ${path}: no such file or directory`);
    }
    return {
      name: path === workspace ? "workspace" : path.slice(path.lastIndexOf("/") + 1),
      path,
      type: node.type,
      size: node.type === "directory" ? 4096 : node.bytes.byteLength,
      mtime: node.mtime,
    };
  }

  #list(directory: string): FileEntry[] {
    const entries: FileEntry[] = [];
    for (const path of this.#nodes.keys()) {
      if (parentPath(path) === directory && path !== directory) entries.push(this.#stat(path));
    }
    return entries.sort((a, b) => a.name.localeCompare(b.name));
  }

  #ensureParents(path: string): void {
    for (let parent = parentPath(path); parent !== workspace; parent = parentPath(parent)) {
      if (!this.#nodes.has(parent)) {
        this.#nodes.set(parent, { type: "directory", bytes: new Uint8Array(), mtime: nextTime() });
      }
    }
  }

  #notify(changes: readonly FileChange[]): void {
    if (this.#options.notifyOwnChanges ?? true) this.sendFilesEvent(changes);
  }

  #send(event: string, data: unknown): void {
    const frame = encoder.encode(
      `id: ${++this.#eventId}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
    );
    for (const stream of this.#streams) stream.enqueue(frame);
  }

  #events(signal: AbortSignal | undefined): Response {
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start: (opened) => {
        controller = opened;
        this.#streams.add(opened);
        const state = {
          sandbox: {
            id: this.sandboxId,
            template: "base",
            status: "running",
            cpuCount: 1,
            memoryMB: 512,
            createdAt: "2025-03-01T09:00:00.000Z",
            expiresAt: "2025-03-01T10:00:00.000Z",
            endedAt: null,
            failure: null,
          },
        };
        opened.enqueue(
          encoder.encode(
            `retry: 1000\n\nid: ${++this.#eventId}\nevent: state\ndata: ${JSON.stringify(state)}\n\n`,
          ),
        );
      },
      cancel: () => {
        if (controller !== undefined) this.#streams.delete(controller);
      },
    });
    signal?.addEventListener("abort", () => {
      if (controller !== undefined) this.#streams.delete(controller);
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" },
    });
  }
}

function absolute(path: string): string {
  const full = path.startsWith("/") ? path : `${workspace}/${path}`;
  return full.replace(/\/+/g, "/").replace(/(.)\/$/, "$1");
}

function parentPath(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

/** The path the real service would act on, or its 400 for one outside /workspace. */
function confined(input: string): string {
  if (input.split("/").includes("..")) {
    throw apiError(
      400,
      "invalid_request",
      `"${input}" leaves /workspace with .. (or an encoded form of it)`,
    );
  }
  const path = absolute(input);
  if (path !== workspace && !path.startsWith(`${workspace}/`)) {
    throw apiError(400, "invalid_request", `"${input}" is outside /workspace`);
  }
  return path;
}

/** `count` files named file-00001.txt … in /workspace/big (for the 10,000-entry story). */
export function manyFiles(count: number, folder = "big"): Record<string, string> {
  const files: Record<string, string> = {};
  const width = String(count).length;
  for (let index = 1; index <= count; index++) {
    files[`${folder}/file-${String(index).padStart(width, "0")}.txt`] = `line ${index}\n`;
  }
  return files;
}
