// The upload component: its store, headless hook and styled component.
export { CairnUpload, type CairnUploadProps } from "./cairn-upload.js";
export { filesFromDataTransfer } from "./folder.js";
export { formatSize } from "./limits.js";
export { signedUrlUploader } from "./signed-url-uploader.js";
export {
  type ConflictPolicy,
  type Uploader,
  type UploadInput,
  type UploadItem,
  type UploadState,
  UploadStore,
  type UploadStoreOptions,
} from "./upload-store.js";
export {
  type UseUpload,
  type UseUploadOptions,
  useUpload,
  useUploadItem,
} from "./use-upload.js";
