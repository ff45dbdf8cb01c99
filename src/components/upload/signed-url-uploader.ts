import { CairnRequestError } from "../client/connection.js";
import { signedFileUrl } from "../client/files.js";
import type { Uploader } from "./upload-store.js";

const cancelled = () => new DOMException("the upload was cancelled", "AbortError");

/**
 * An uploader through a signed PUT URL: asks the service for a URL that writes this one path
 * once, at most the file's size, then PUTs the file there with no credentials on the request
 * (XMLHttpRequest, for upload progress; streamed from disk by the browser). For a page whose
 * token may sign URLs and whose uploads go through a proxy that must not see the token.
 *
 * @example
 * <CairnUpload uploader={signedUrlUploader} />
 */
export const signedUrlUploader: Uploader = async (connection, sandboxId, path, file, options) => {
  if (options.signal?.aborted) throw cancelled();
  const { url } = await signedFileUrl(connection, sandboxId, path, {
    method: "PUT",
    expiresInSeconds: 300,
    maxBytes: Math.max(1, file.size),
  });
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(cancelled());
    const request = new XMLHttpRequest();
    request.open("PUT", url);
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
};
