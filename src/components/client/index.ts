// The kit's client layer: fetch-only calls to the service, framework-free.
export {
  type CairnConnection,
  CairnRequestError,
  cairnFetch,
  cairnJson,
  connectionHeaders,
  serviceUrl,
} from "./connection.js";
export {
  type EventStreamState,
  type FileChange,
  type SandboxEvent,
  type SandboxEventHandlers,
  type SandboxExecEvent,
  type SandboxState,
  type SandboxUsageSample,
  subscribeSandboxEvents,
} from "./events.js";
export {
  type FileEntry,
  listFiles,
  makeDirectory,
  moveFile,
  removeFile,
  signedFileUrl,
  statFile,
  type UploadOptions,
  uploadFile,
} from "./files.js";
