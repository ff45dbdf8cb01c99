// An in-memory sandbox /workspace answering the files API as the real routes do
// (src/server/sandboxes/files-routes.ts: stat, list, mkdir -p, PUT; `{error, message}` bodies,
// 404 `not_found` for a missing path, 401 without a token, 404 `sandbox_not_found` for another
// sandbox, 400 for a path outside /workspace), and an uploader that writes into it with
// progress, as `uploadFile` does over XMLHttpRequest (which no fetch can stand in for).

import { type CairnConnection, CairnRequestError } from "../../src/components/client/connection.js";
import type { FileEntry } from "../../src/components/client/files.js";
import type { Uploader } from "../../src/components/upload/index.js";

const endpoint = "http://cairn.test";
const sandboxId = "sbx_0123456789abcdef01234567";

interface Node {
  readonly type: "file" | "directory";
  readonly size: number;
  readonly mtime: string;
}

export interface UploadServiceOptions {
  /** Paths that exist at the start: a trailing slash makes a directory. */
  readonly existing?: readonly string[];
}

export interface FakeUploaderOptions {
  /** Progress steps per file (default 10). */
  readonly steps?: number;
  /** Milliseconds between steps (default 30). */
  readonly stepMs?: number;
  /** Never finishes: progress stops at this fraction (0–1) until cancelled. */
  readonly stallAt?: number;
  /** An error for this attempt of this path (attempts count from 1), as the service answers. */
  readonly fail?: (path: string, attempt: number) => CairnRequestError | TypeError | undefined;
}

export function createUploadService(options: UploadServiceOptions = {}) {
  const nodes = new Map<string, Node>();
  const now = () => new Date().toISOString();
  nodes.set("/workspace", { type: "directory", size: 4096, mtime: now() });
  const parentOf = (path: string) => path.slice(0, path.lastIndexOf("/")) || "/";
  const mkdirs = (path: string) => {
    for (let at = path; at !== "/" && !nodes.has(at); at = parentOf(at)) {
      nodes.set(at, { type: "directory", size: 4096, mtime: now() });
    }
  };
  for (const path of options.existing ?? []) {
    if (path.endsWith("/")) mkdirs(path.slice(0, -1));
    else {
      mkdirs(parentOf(path));
      nodes.set(path, { type: "file", size: 1024, mtime: now() });
    }
  }
  const entry = (path: string, node: Node): FileEntry => ({
    name: path === "/workspace" ? "workspace" : path.slice(path.lastIndexOf("/") + 1),
    path,
    type: node.type,
    size: node.size,
    mtime: node.mtime,
  });
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  const confined = (path: string | null): string | Response => {
    if (path === null || path === "") {
      return json(400, { error: "invalid_request", message: "give ?path= under /workspace" });
    }
    const absolute = path.startsWith("/") ? path : `/workspace/${path}`;
    if (absolute.split("/").includes("..")) {
      return json(400, {
        error: "invalid_request",
        message: `"${path}" leaves /workspace with .. (or an encoded form of it)`,
      });
    }
    const normal = absolute.replace(/\/+/g, "/").replace(/\/$/, "");
    if (normal !== "/workspace" && !normal.startsWith("/workspace/")) {
      return json(400, { error: "invalid_request", message: `"${path}" is outside /workspace` });
    }
    return normal;
  };
  const requests: string[] = [];
  const signed: Array<{ path: string; method: string; maxBytes: number | null }> = [];

  const fakeFetch: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === "string" ? input : (input as Request).url);
    const method = init?.method ?? "GET";
    requests.push(`${method} ${url.pathname}${url.search}`);
    const headers = new Headers(init?.headers);
    if (!headers.get("authorization")?.startsWith("Bearer ")) {
      return json(401, { error: "unauthorized", message: "give a token or an API key" });
    }
    const match = url.pathname.match(
      /^\/api\/sandboxes\/([^/]+)\/files(\/stat|\/mkdir|\/signed-url)?$/,
    );
    if (match === null)
      return json(404, { error: "not_found", message: `no route ${url.pathname}` });
    if (decodeURIComponent(match[1] ?? "") !== sandboxId) {
      return json(404, {
        error: "sandbox_not_found",
        message: `sandbox ${match[1]} not found`,
        sandbox_id: match[1],
      });
    }
    if (match[2] === "/signed-url" && method === "POST") {
      const body = JSON.parse(String(init?.body ?? "{}")) as {
        path?: string;
        method?: string;
        expiresInSeconds?: number;
        maxBytes?: number;
      };
      const path = confined(body.path ?? null);
      if (typeof path !== "string") return path;
      const expiresAt = new Date(Date.now() + (body.expiresInSeconds ?? 900) * 1000).toISOString();
      const query = new URLSearchParams({ path, method: body.method ?? "GET", sig: "fake" });
      signed.push({ path, method: body.method ?? "GET", maxBytes: body.maxBytes ?? null });
      return json(200, {
        url: `${endpoint}/api/sandboxes/${sandboxId}/files/signed?${query}`,
        method: body.method ?? "GET",
        path,
        expiresAt,
        maxBytes: body.maxBytes ?? null,
      });
    }
    if (match[2] === "/mkdir" && method === "POST") {
      const body = JSON.parse(String(init?.body ?? "{}")) as { path?: string };
      const path = confined(body.path ?? null);
      if (typeof path !== "string") return path;
      if (nodes.get(path)?.type === "file") {
        return json(409, { error: "conflict", message: `mkdir ${path}: File exists` });
      }
      mkdirs(path);
      return json(201, entry(path, nodes.get(path) as Node));
    }
    const path = confined(url.searchParams.get("path"));
    if (typeof path !== "string") return path;
    const node = nodes.get(path);
    if (match[2] === "/stat" && method === "GET") {
      if (node === undefined) {
        return json(404, {
          error: "not_found",
          message: `stat ${path}: no such file or directory`,
        });
      }
      return json(200, entry(path, node));
    }
    if (match[2] === undefined && method === "GET") {
      if (node?.type !== "directory") {
        return json(404, {
          error: "not_found",
          message: `stat ${path}: no such file or directory`,
        });
      }
      const entries = [...nodes]
        .filter(([other]) => parentOf(other) === path && other !== path)
        .map(([other, child]) => entry(other, child));
      return json(200, { path, entries });
    }
    return json(404, { error: "not_found", message: `no route ${method} ${url.pathname}` });
  };

  const connection: CairnConnection = {
    endpoint,
    token: "sbt_fake_browser_token",
    fetch: fakeFetch,
  };

  /** An uploader writing into this workspace with progress, honouring cancel. */
  const uploader = (fake: FakeUploaderOptions = {}): Uploader => {
    const attempts = new Map<string, number>();
    return (_connection, id, path, file, { onProgress, signal }) =>
      new Promise((resolve, reject) => {
        const attempt = (attempts.get(path) ?? 0) + 1;
        attempts.set(path, attempt);
        const aborted = () => reject(new DOMException("the upload was cancelled", "AbortError"));
        if (signal?.aborted) return aborted();
        if (id !== sandboxId) {
          return reject(new CairnRequestError(404, "sandbox_not_found", `sandbox ${id} not found`));
        }
        const steps = fake.steps ?? 10;
        let step = 0;
        const timer = setInterval(() => {
          const failure = fake.fail?.(path, attempt);
          if (failure !== undefined && step === Math.floor(steps / 2)) {
            clearInterval(timer);
            return reject(failure);
          }
          if (fake.stallAt !== undefined && step >= Math.floor(steps * fake.stallAt)) return;
          step += 1;
          onProgress?.(Math.min(file.size, Math.round((file.size * step) / steps)), file.size);
          if (step < steps) return;
          clearInterval(timer);
          if (nodes.get(parentOf(path))?.type !== "directory") {
            return reject(
              new CairnRequestError(404, "not_found", `write ${path}: no such file or directory`),
            );
          }
          nodes.set(path, { type: "file", size: file.size, mtime: now() });
          resolve({ path, bytes: file.size });
        }, fake.stepMs ?? 30);
        signal?.addEventListener("abort", () => {
          clearInterval(timer);
          aborted();
        });
      });
  };

  return {
    connection,
    sandboxId,
    uploader,
    /** Every request the fetch saw ("GET /api/…?path=…"). */
    requests,
    /** The signed URLs asked for. */
    signed,
    has: (path: string) => nodes.has(path),
    node: (path: string) => nodes.get(path),
    paths: () => [...nodes.keys()].sort(),
  };
}

export type UploadService = ReturnType<typeof createUploadService>;

/** A File of `size` bytes (made of zeros: never read whole by the uploader). */
export const fakeFile = (name: string, size: number, type = "") =>
  new File([new Uint8Array(size)], name, { type });

/** A small PNG (an 8×8 teal and green check), for image previews. */
export function pngFile(name = "photo.png"): File {
  const base64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAKElEQVR4nGPg7urh7uqRrreWrrdGZjNgFeXu6mHAKgqVwGoaAx3sAABxED7BBmIbowAAAABJRU5ErkJggg==";
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  return new File([bytes], name, { type: "image/png" });
}

/** A DataTransfer as Chromium hands one to a drop: items with entries, folders walkable. */
export function folderDrop(tree: Record<string, File[]>, loose: File[] = []) {
  const fileEntry = (file: File, fullPath: string) => ({
    isFile: true,
    isDirectory: false,
    name: file.name,
    fullPath,
    file: (resolve: (file: File) => void) => resolve(file),
  });
  const directoryEntry = (path: string): object => {
    const children = [
      ...(tree[path] ?? []).map((file) => fileEntry(file, `/${path}/${file.name}`)),
      ...Object.keys(tree)
        .filter(
          (other) => other.startsWith(`${path}/`) && !other.slice(path.length + 1).includes("/"),
        )
        .map((other) => directoryEntry(other)),
    ];
    let read = false;
    return {
      isFile: false,
      isDirectory: true,
      name: path.split("/").at(-1),
      fullPath: `/${path}`,
      // Answers in batches, the last one empty, as browsers do.
      createReader: () => ({
        readEntries: (resolve: (entries: object[]) => void) => {
          resolve(read ? [] : children);
          read = true;
        },
      }),
    };
  };
  const roots = Object.keys(tree).filter((path) => !path.includes("/"));
  const items = [
    ...roots.map((path) => ({ kind: "file", webkitGetAsEntry: () => directoryEntry(path) })),
    ...loose.map((file) => ({
      kind: "file",
      webkitGetAsEntry: () => fileEntry(file, `/${file.name}`),
    })),
  ];
  return { types: ["Files"], items, files: loose, dropEffect: "none" };
}
