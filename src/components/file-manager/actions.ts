import type { FileEntry } from "../client/files.js";

/** What the parts of the styled file manager ask of it (dialogs, menus, downloads, drops). */
export interface FileManagerActions {
  /** Opens a folder, or hands a file to onOpenFile. */
  open(entry: FileEntry): void;
  /** Asks to delete, in a dialog that names what goes. */
  askDelete(paths: readonly string[]): void;
  download(entry: FileEntry): void;
  newFolder(): void;
  /** The context menu at a point, for an entry or for the folder's background. */
  openMenu(point: { readonly x: number; readonly y: number }, entry?: FileEntry): void;
  /** A drag of entries begins. */
  startDrag(paths: readonly string[], data: DataTransfer): void;
  /** That drag ended, dropped or not: its entries are no longer being dragged. */
  endDrag(): void;
  /** Whether a drag over `directory` may drop there (entries moved, or files uploaded). */
  canDrop(directory: string, data: DataTransfer): boolean;
  drop(directory: string, data: DataTransfer): void;
}

/** The type of the data a drag of entries carries: their paths as JSON. */
export const entriesMime = "application/x-cairn-paths";
