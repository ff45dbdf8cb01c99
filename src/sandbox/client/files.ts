import {
  type FileEntry,
  fileEntrySchema,
  fileListSchema,
  fileWrittenSchema,
} from "../../core/wire/files.js";
import { type SignedUrl, signedUrlSchema } from "../../core/wire/sandbox-access.js";
import { type ResolvedConnection, sandboxJson, sandboxRequest } from "./http.js";

/** A file or directory of a sandbox's /workspace. */
export type SandboxFileEntry = FileEntry;

/** How a signed URL may be used: `sandbox.files.signedUrl(path, options)`. */
export interface SignedUrlOptions {
  /** GET reads the file (as often as wanted); PUT writes it, once. Default GET. */
  readonly method?: "GET" | "PUT";
  /** Seconds until it stops working: 1 to 86,400. Default 900 (15 minutes). */
  readonly expiresIn?: number;
  /** For PUT: the most bytes the upload may have (413 past it, and the file left as it was). */
  readonly maxBytes?: number;
}

/**
 * The files under a sandbox's /workspace. Paths are relative to /workspace or absolute under
 * it; `..`, other places and symbolic links that lead out are refused.
 */
export class SandboxFiles {
  constructor(
    private readonly connection: ResolvedConnection,
    private readonly sandboxId: string,
  ) {}

  async list(path = "/workspace"): Promise<SandboxFileEntry[]> {
    const response = await sandboxRequest(this.connection, "GET", this.url("", path));
    if (!response.headers.get("content-type")?.includes("json")) {
      await response.body?.cancel();
      throw new TypeError(`${path} is a file; read() it`);
    }
    const answer = fileListSchema.safeParse(await response.json());
    if (!answer.success)
      throw new TypeError(`${path}: the service's listing is not one this client reads`);
    return answer.data.entries;
  }

  stat(path: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "GET", this.url("/stat", path), fileEntrySchema);
  }

  /** The bytes of a file, streamed. */
  async readStream(path: string): Promise<ReadableStream<Uint8Array>> {
    const response = await sandboxRequest(this.connection, "GET", this.url("", path));
    if (response.headers.get("content-type")?.includes("json")) {
      await response.body?.cancel();
      throw new TypeError(`${path} is a directory; list() it`);
    }
    return response.body ?? new ReadableStream();
  }

  async read(path: string): Promise<Uint8Array> {
    const stream = await this.readStream(path);
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async readText(path: string): Promise<string> {
    return new TextDecoder().decode(await this.read(path));
  }

  /** Writes a file (streamed: a ReadableStream or Blob of any size is sent as it is read). */
  async write(
    path: string,
    data: string | Uint8Array | Blob | ReadableStream<Uint8Array>,
  ): Promise<{ path: string; bytes: number }> {
    const body = typeof data === "string" ? new TextEncoder().encode(data) : (data as BodyInit);
    // No time limit: the answer comes once the whole body is in, however long it takes.
    return sandboxJson(this.connection, "PUT", this.url("", path), fileWrittenSchema, {
      body: body as BodyInit,
      headers: { "content-type": "application/octet-stream" },
      timeoutMs: 0,
    });
  }

  /**
   * A URL that reads (GET) or writes (PUT) this one path without an API key until it expires,
   * for a browser or another program: `<a href>`, `fetch(url, { method: "PUT", body })`. A PUT
   * URL works once; anything else (expired, changed, another path) gets 403.
   *
   * @example
   * const { url } = await sandbox.files.signedUrl("report.pdf", { expiresIn: 600 });
   * const upload = await sandbox.files.signedUrl("input.csv", { method: "PUT", maxBytes: 10_000_000 });
   */
  signedUrl(path: string, options: SignedUrlOptions = {}): Promise<SignedUrl> {
    return sandboxJson(this.connection, "POST", this.url("/signed-url"), signedUrlSchema, {
      json: {
        path,
        method: options.method ?? "GET",
        ...(options.expiresIn === undefined ? {} : { expiresInSeconds: options.expiresIn }),
        ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      },
    });
  }

  mkdir(path: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "POST", this.url("/mkdir"), fileEntrySchema, {
      json: { path },
    });
  }

  move(from: string, to: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "POST", this.url("/move"), fileEntrySchema, {
      json: { from, to },
    });
  }

  async remove(path: string): Promise<void> {
    const response = await sandboxRequest(this.connection, "DELETE", this.url("", path));
    await response.body?.cancel();
  }

  private url(suffix: string, path?: string): string {
    const base = `/api/sandboxes/${encodeURIComponent(this.sandboxId)}/files${suffix}`;
    return path === undefined ? base : `${base}?path=${encodeURIComponent(path)}`;
  }
}
