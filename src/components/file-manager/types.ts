import type { FileEntry } from "../client/files.js";

export type { FileEntry } from "../client/files.js";
export type { SortDirection, SortKey, SortOrder } from "./sort.js";

export type ViewMode = "list" | "grid";

/** What the file manager was doing when something went wrong, or is doing now. */
export type FileAction =
  | "open"
  | "rename"
  | "delete"
  | "create-folder"
  | "move"
  | "upload"
  | "download";

/** A directory's children as last read, and whether a read is under way. */
export interface DirectoryListing {
  readonly path: string;
  /** `idle`: never read (or forgotten); `loading`: first read under way. */
  readonly status: "idle" | "loading" | "loaded" | "error";
  /** As the service lists them (by name). */
  readonly entries: readonly FileEntry[];
  /** A read again is under way while the entries above are shown. */
  readonly refreshing: boolean;
  readonly error: FileManagerError | undefined;
}

/** Something that failed, told in one sentence that names the file and the service's reason. */
export interface FileManagerError {
  readonly id: number;
  readonly action: FileAction;
  readonly path: string;
  /** The HTTP status, when the service answered; undefined for a check made here. */
  readonly status: number | undefined;
  /** The service's error code (`forbidden`, `not_found` …). */
  readonly code: string | undefined;
  /** The service's own sentence. */
  readonly detail: string;
  /** What to show: "Could not delete “notes.txt”: …". */
  readonly message: string;
}

/** A change in flight (shown as busy, announced politely). */
export interface PendingOperation {
  readonly id: number;
  readonly action: FileAction;
  readonly paths: readonly string[];
}

/** One visible row of the folder tree, flattened in display order. */
export interface TreeRow {
  readonly path: string;
  readonly name: string;
  /** 1 for the root. */
  readonly level: number;
  readonly setSize: number;
  readonly posInSet: number;
  readonly expanded: boolean;
  readonly loading: boolean;
  /** Undefined until the folder has been read. */
  readonly hasChildren: boolean | undefined;
}

/** Paths cut with Ctrl+X, waiting for a paste. */
export interface FileClipboard {
  readonly paths: readonly string[];
}
