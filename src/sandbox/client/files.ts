import { type ResolvedConnection, sandboxJson, sandboxRequest } from "./http.js";

/** A file or directory of a sandbox's /workspace. */
export interface SandboxFileEntry {
  readonly name: string;
  readonly path: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly size: number;
  readonly mtime: string;
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
    const answer = await sandboxJson<{ entries: SandboxFileEntry[] }>(
      this.connection,
      "GET",
      this.url("", path),
      { sandboxId: this.sandboxId },
    );
    if (!Array.isArray(answer.entries)) throw new TypeError(`${path} is a file; read() it`);
    return answer.entries;
  }

  stat(path: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "GET", this.url("/stat", path), {
      sandboxId: this.sandboxId,
    });
  }

  /** The bytes of a file, streamed. */
  async readStream(path: string): Promise<ReadableStream<Uint8Array>> {
    const response = await sandboxRequest(this.connection, "GET", this.url("", path), {
      sandboxId: this.sandboxId,
    });
    if (response.headers.get("content-type")?.includes("json")) {
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
    const response = await sandboxRequest(this.connection, "PUT", this.url("", path), {
      body: body as BodyInit,
      sandboxId: this.sandboxId,
      headers: { "content-type": "application/octet-stream" },
    });
    return (await response.json()) as { path: string; bytes: number };
  }

  mkdir(path: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "POST", `/api/sandboxes/${this.sandboxId}/files/mkdir`, {
      json: { path },
      sandboxId: this.sandboxId,
    });
  }

  move(from: string, to: string): Promise<SandboxFileEntry> {
    return sandboxJson(this.connection, "POST", `/api/sandboxes/${this.sandboxId}/files/move`, {
      json: { from, to },
      sandboxId: this.sandboxId,
    });
  }

  async remove(path: string): Promise<void> {
    await sandboxRequest(this.connection, "DELETE", this.url("", path), {
      sandboxId: this.sandboxId,
    });
  }

  private url(suffix: string, path: string): string {
    return `/api/sandboxes/${this.sandboxId}/files${suffix}?path=${encodeURIComponent(path)}`;
  }
}
