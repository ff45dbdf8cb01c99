import { useEffect, useMemo, useSyncExternalStore } from "react";
import type { CairnConnection } from "../client/connection.js";
import type { FileEntry } from "../client/files.js";
import { useOptionalCairnKit, useSandboxTarget } from "../context.js";
import type { ReadonlyCell } from "./cell.js";
import { FileManagerStore } from "./file-manager-store.js";
import { sandboxFileService } from "./file-service.js";
import type {
  DirectoryListing,
  FileClipboard,
  FileManagerError,
  PendingOperation,
  SortOrder,
  TreeRow,
  ViewMode,
} from "./types.js";

export interface UseFileManagerOptions {
  /** Where the service is; default the provider's. */
  readonly connection?: CairnConnection | undefined;
  /** Whose files; default the provider's sandbox. */
  readonly sandboxId?: string | undefined;
  /** The top the manager never leaves (default /workspace). */
  readonly root?: string | undefined;
  /** The folder shown first, uncontrolled. */
  readonly initialPath?: string | undefined;
  /** The folder shown, controlled with `onPathChange`. */
  readonly path?: string | undefined;
  readonly onPathChange?: ((path: string) => void) | undefined;
  /** The selected paths, controlled with `onSelectionChange`. */
  readonly selection?: readonly string[] | undefined;
  readonly onSelectionChange?: ((paths: string[]) => void) | undefined;
  /** List or tiles, controlled with `onViewChange`. */
  readonly view?: ViewMode | undefined;
  readonly defaultView?: ViewMode | undefined;
  readonly onViewChange?: ((view: ViewMode) => void) | undefined;
  /** Called with a file opened (Enter, double click); folders open in place. */
  readonly onOpenFile?: ((entry: FileEntry) => void) | undefined;
  /**
   * Called with the folder shown, first on mount and then on each change: give it to an upload
   * box so that it writes where the user looks.
   */
  readonly onDirectoryChange?: ((path: string) => void) | undefined;
  /** Milliseconds to gather file events before reading folders again (default 150). */
  readonly refreshDelayMs?: number | undefined;
}

/** Reads one piece of a store's state, re-rendering for that piece alone. */
export function useStoreCell<T>(cell: ReadonlyCell<T>): T {
  return useSyncExternalStore(cell.subscribe, cell.get, cell.get);
}

/**
 * The file manager's store for these options: made once per sandbox and root, started while
 * mounted (reads, file events), kept in step with controlled props. Subscribes to nothing:
 * read what you show with {@link useStoreCell}.
 */
export function useFileManagerStore(
  options: UseFileManagerOptions,
  /** Named in the error thrown when no connection or sandbox is given. */
  component = "useFileManager",
): FileManagerStore {
  const { connection, sandboxId } = useSandboxTarget(component, options);
  const { endpoint, token, apiKey, fetch: fetchFunction } = connection;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new store per target only; the rest is synced below
  const store = useMemo(
    () =>
      new FileManagerStore({
        service: sandboxFileService(connection, sandboxId),
        root: options.root,
        initialPath: options.path ?? options.initialPath,
        initialView: options.view ?? options.defaultView,
        initialSelection: options.selection,
        refreshDelayMs: options.refreshDelayMs,
      }),
    [endpoint, token, apiKey, fetchFunction, sandboxId, options.root],
  );
  useEffect(() => {
    store.callbacks = {
      onPathChange: options.onPathChange,
      onSelectionChange: options.onSelectionChange,
      onViewChange: options.onViewChange,
      onOpenFile: options.onOpenFile,
      pathControlled: options.path !== undefined,
      selectionControlled: options.selection !== undefined,
      viewControlled: options.view !== undefined,
    };
  });
  useEffect(() => {
    store.start();
    return () => store.stop();
  }, [store]);
  useEffect(() => {
    if (options.path !== undefined) store.syncPath(options.path);
  }, [store, options.path]);
  useEffect(() => {
    if (options.selection !== undefined) store.syncSelection(options.selection);
  }, [store, options.selection]);
  useEffect(() => {
    if (options.view !== undefined) store.syncView(options.view);
  }, [store, options.view]);
  const path = useStoreCell(store.path);
  const { onDirectoryChange } = options;
  const sharedFolder = useOptionalCairnKit()?.sharedFolder;
  // biome-ignore lint/correctness/useExhaustiveDependencies: told on a change of folder, not of callback
  useEffect(() => {
    onDirectoryChange?.(path);
    sharedFolder?.set(path);
  }, [path, sharedFolder]);
  // An upload box under the same provider finished a file: its folder is read again now, not
  // when (or whether) the sandbox's file events tell.
  useEffect(
    () =>
      sharedFolder?.subscribeUploads((uploaded) => {
        void store.refresh(uploaded.slice(0, uploaded.lastIndexOf("/")) || "/");
      }),
    [sharedFolder, store],
  );
  return store;
}

/** Everything a file manager shows, for a UI of your own. */
export interface FileManagerState {
  readonly store: FileManagerStore;
  readonly path: string;
  readonly listing: DirectoryListing;
  /** The current folder's entries in the current sort. */
  readonly entries: readonly FileEntry[];
  readonly selection: ReadonlySet<string>;
  readonly focus: string | undefined;
  readonly view: ViewMode;
  readonly sort: SortOrder;
  readonly tree: readonly TreeRow[];
  readonly operations: readonly PendingOperation[];
  readonly errors: readonly FileManagerError[];
  readonly clipboard: FileClipboard | undefined;
  readonly renaming: string | undefined;
  /** Asks for a signed URL and has the browser download the file. */
  readonly download: (entry: FileEntry) => Promise<void>;
}

/**
 * The file manager without its look: the store (call its methods to act) and its state.
 *
 * @example
 * const files = useFileManager({ sandboxId, onOpenFile: (entry) => preview(entry.path) });
 * files.entries.map((entry) => <li key={entry.path}>{entry.name}</li>);
 */
export function useFileManager(options: UseFileManagerOptions = {}): FileManagerState {
  const store = useFileManagerStore(options);
  const path = useStoreCell(store.path);
  return {
    store,
    path,
    listing: useStoreCell(store.listing(path)),
    entries: useStoreCell(store.entries),
    selection: useStoreCell(store.selection),
    focus: useStoreCell(store.focus),
    view: useStoreCell(store.view),
    sort: useStoreCell(store.sort),
    tree: useStoreCell(store.tree),
    operations: useStoreCell(store.operations),
    errors: useStoreCell(store.errors),
    clipboard: useStoreCell(store.clipboard),
    renaming: useStoreCell(store.renaming),
    download: (entry) => downloadEntry(store, entry),
  };
}

/** Asks for a signed GET URL and clicks an `<a download>` to it. */
export async function downloadEntry(store: FileManagerStore, entry: FileEntry): Promise<void> {
  const url = await store.downloadUrl(entry.path);
  if (url === undefined) return;
  const link = document.createElement("a");
  link.href = url;
  link.download = entry.name;
  link.rel = "noopener";
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
}
