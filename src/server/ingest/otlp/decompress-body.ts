import { gunzipSync } from "node:zlib";
import { CairnError } from "../../../core/errors/index.js";

/**
 * The body with its `Content-Encoding` undone: none (or `identity`) and `gzip` are accepted.
 * The decoded body may be at most `maxDecodedBytes`; gzip output past that is never
 * allocated, so a small compressed body cannot exhaust memory.
 */
export function decompressBody(
  body: Uint8Array,
  contentEncoding: string | undefined,
  maxDecodedBytes: number,
): Uint8Array {
  const encoding = (contentEncoding ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") {
    if (body.byteLength > maxDecodedBytes) throw tooLarge(maxDecodedBytes, "is");
    return body;
  }
  if (encoding !== "gzip") {
    throw new CairnError(
      "unsupported_media_type",
      `content-encoding "${encoding}" is not supported; send the body uncompressed or with content-encoding gzip`,
    );
  }
  try {
    return gunzipSync(body, { maxOutputLength: maxDecodedBytes });
  } catch (error) {
    if ((error as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
      throw tooLarge(maxDecodedBytes, "decompresses to", error);
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new CairnError(
      "invalid_request",
      `the body is not valid gzip (${reason}), though content-encoding says gzip`,
      { cause: error },
    );
  }
}

function tooLarge(limit: number, verb: string, cause?: unknown): CairnError {
  return new CairnError(
    "payload_too_large",
    `the body ${verb} more than ${limit} bytes, the most this service accepts in one request; export smaller batches`,
    cause === undefined ? undefined : { cause },
  );
}
