// The file-manager component: its store, headless hook and styled component.
export { CairnFileManager, type CairnFileManagerProps } from "./cairn-file-manager.js";
export type { ReadonlyCell } from "./cell.js";
export {
  type FileManagerCallbacks,
  FileManagerStore,
  type FileManagerStoreOptions,
  type SelectMode,
} from "./file-manager-store.js";
export { type FileService, sandboxFileService } from "./file-service.js";
export type {
  DirectoryListing,
  FileAction,
  FileClipboard,
  FileEntry,
  FileManagerError,
  PendingOperation,
  SortDirection,
  SortKey,
  SortOrder,
  TreeRow,
  ViewMode,
} from "./types.js";
export {
  type FileManagerState,
  type UseFileManagerOptions,
  useFileManager,
  useFileManagerStore,
  useStoreCell,
} from "./use-file-manager.js";
