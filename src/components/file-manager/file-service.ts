import { type CairnConnection, cairnFetch } from "../client/connection.js";
import { subscribeSandboxEvents } from "../client/events.js";
import {
  type FileEntry,
  listFiles,
  makeDirectory,
  moveFile,
  removeFile,
  signedFileUrl,
  uploadFile,
} from "../client/files.js";

/** What the file manager asks of the service: the kit's files client, bound to one sandbox. */
export interface FileService {
  list(path: string, signal: AbortSignal): Promise<FileEntry[]>;
  makeDirectory(path: string): Promise<unknown>;
  move(from: string, to: string): Promise<unknown>;
  remove(path: string): Promise<void>;
  downloadUrl(path: string): Promise<string>;
  upload(path: string, file: Blob): Promise<unknown>;
  /** Follows file changes; returns the function that stops. */
  watch(onChanges: (paths: ReadonlyArray<{ path: string; change: string }>) => void): () => void;
}

/** The files API of `sandboxId` through `connection`. */
export function sandboxFileService(connection: CairnConnection, sandboxId: string): FileService {
  const uploadPath = (path: string) =>
    `/api/sandboxes/${encodeURIComponent(sandboxId)}/files?path=${encodeURIComponent(path)}`;
  return {
    list: (path, signal) => listFiles(connection, sandboxId, path, signal),
    makeDirectory: (path) => makeDirectory(connection, sandboxId, path),
    move: (from, to) => moveFile(connection, sandboxId, from, to),
    remove: (path) => removeFile(connection, sandboxId, path),
    downloadUrl: async (path) => (await signedFileUrl(connection, sandboxId, path)).url,
    // A connection with its own fetch (a test's service, an app's wrapper) is used for uploads
    // too; otherwise XMLHttpRequest streams the file from disk.
    upload: (path, file) =>
      connection.fetch === undefined
        ? uploadFile(connection, sandboxId, path, file)
        : cairnFetch(connection, uploadPath(path), {
            method: "PUT",
            body: file,
            headers: { "content-type": "application/octet-stream" },
          }).then((response) => response.json()),
    watch: (onChanges) =>
      subscribeSandboxEvents(connection, sandboxId, {
        onEvent: (event) => {
          if (event.type === "files") onChanges(event.changes);
        },
      }),
  };
}
