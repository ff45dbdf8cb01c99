import { putWithProgress, signedFileUrl } from "../client/files.js";
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
  // No credentials on the write itself: the URL is the permission.
  return putWithProgress(url, {}, path, file, options);
};
