import {
  type CairnConnection,
  CairnRequestError,
  cairnFetch,
  cairnJson,
  connectionHeaders,
  serviceUrl,
} from "./connection.js";

/** A file or directory of a sandbox's /workspace, as the files API lists it. */
export interface FileEntry {
  readonly name: string;
  /** Absolute, under /workspace. */
  readonly path: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly size: number;
  /** ISO 8601. */
  readonly mtime: string;
}

const filesPath = (sandboxId: string, suffix = "", path?: string) =>
  `/api/sandboxes/${encodeURIComponent(sandboxId)}/files${suffix}${
    path === undefined ? "" : `?path=${encodeURIComponent(path)}`
  }`;

/** The entries of a directory. */
export async function listFiles(
  connection: CairnConnection,
  sandboxId: string,
  path = "/workspace",
  signal?: AbortSignal,
): Promise<FileEntry[]> {
  const answer = await cairnJson<{ entries: FileEntry[] }>(
    connection,
    filesPath(sandboxId, "", path),
    signal === undefined ? {} : { signal },
  );
  return answer.entries;
}

export function statFile(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
): Promise<FileEntry> {
  return cairnJson(connection, filesPath(sandboxId, "/stat", path));
}

export function makeDirectory(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
): Promise<FileEntry> {
  return cairnJson(connection, filesPath(sandboxId, "/mkdir"), { method: "POST", json: { path } });
}

export function moveFile(
  connection: CairnConnection,
  sandboxId: string,
  from: string,
  to: string,
): Promise<FileEntry> {
  return cairnJson(connection, filesPath(sandboxId, "/move"), {
    method: "POST",
    json: { from, to },
  });
}

export async function removeFile(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
): Promise<void> {
  const response = await cairnFetch(connection, filesPath(sandboxId, "", path), {
    method: "DELETE",
  });
  await response.body?.cancel();
}

/** A URL that reads (GET) or writes once (PUT) one path without credentials, until it expires. */
export async function signedFileUrl(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
  options: { method?: "GET" | "PUT"; expiresInSeconds?: number; maxBytes?: number } = {},
): Promise<{ url: string; method: "GET" | "PUT"; expiresAt: string }> {
  const signed = await cairnJson<{ url: string; method: "GET" | "PUT"; expiresAt: string }>(
    connection,
    filesPath(sandboxId, "/signed-url"),
    { method: "POST", json: { path, method: options.method ?? "GET", ...options } },
  );
  // The URL is clicked or written to: it must be the service's own, never a `javascript:` URL
  // or another site that a compromised service or a proxy between might answer with.
  const own = new URL(connection.endpoint).origin;
  let origin = "";
  try {
    origin = new URL(signed.url).origin;
  } catch {
    // Not a URL at all: refused below.
  }
  if (origin !== own) {
    throw new CairnRequestError(
      502,
      "bad_signed_url",
      `the service answered with a signed URL that is not on ${own}`,
    );
  }
  return signed;
}

export interface UploadOptions {
  /** Bytes sent so far, of `total`. */
  readonly onProgress?: (sent: number, total: number) => void;
  readonly signal?: AbortSignal;
}

/**
 * Writes `file` to `path` in the sandbox, streamed from disk by the browser (never read whole
 * into memory), with upload progress.
 */
export function uploadFile(
  connection: CairnConnection,
  sandboxId: string,
  path: string,
  file: Blob,
  options: UploadOptions = {},
): Promise<{ path: string; bytes: number }> {
  return putWithProgress(
    serviceUrl(connection, filesPath(sandboxId, "", path)),
    connectionHeaders(connection),
    path,
    file,
    options,
  );
}

/**
 * PUTs `file` to `url` and reads the files API's answer. XMLHttpRequest, because fetch reports
 * no upload progress and streams a request body only over HTTP/2.
 */
export function putWithProgress(
  url: string,
  headers: Readonly<Record<string, string>>,
  path: string,
  file: Blob,
  options: UploadOptions = {},
): Promise<{ path: string; bytes: number }> {
  const cancelled = () => new DOMException("the upload was cancelled", "AbortError");
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(cancelled());
      return;
    }
    const request = new XMLHttpRequest();
    request.open("PUT", url);
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    request.setRequestHeader("content-type", "application/octet-stream");
    request.upload.onprogress = (event) =>
      options.onProgress?.(event.loaded, event.total || file.size);
    request.onload = () => {
      let body: { error?: string; message?: string; path?: string; bytes?: number } = {};
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // Not JSON: the status says enough.
      }
      if (request.status >= 200 && request.status < 300) {
        resolve({ path: body.path ?? path, bytes: body.bytes ?? file.size });
      } else {
        reject(
          new CairnRequestError(
            request.status,
            body.error ?? `http_${request.status}`,
            body.message ?? `the service answered ${request.status}`,
          ),
        );
      }
    };
    request.onerror = () =>
      reject(new CairnRequestError(0, "network_error", `could not reach ${new URL(url).origin}`));
    request.onabort = () => reject(cancelled());
    options.signal?.addEventListener("abort", () => request.abort(), { once: true });
    request.send(file);
  });
}
