import { type CSSProperties, useCallback, useMemo, useRef, useState } from "react";
import type { FileEntry } from "../client/files.js";
import { visibleName } from "../client/names.js";
import { entriesMime, type FileManagerActions } from "./actions.js";
import { Breadcrumbs } from "./breadcrumbs.js";
import { ContextMenu, type MenuItem } from "./context-menu.js";
import { DeleteDialog } from "./delete-dialog.js";
import type { FileManagerStore } from "./file-manager-store.js";
import { FileView } from "./file-view.js";
import { FolderTree } from "./folder-tree.js";
import { shownName } from "./format.js";
import { baseName, draggedPaths, isWithin, parentOf } from "./paths.js";
import { Toolbar } from "./toolbar.js";
import type { FileAction } from "./types.js";
import {
  downloadEntry,
  type UseFileManagerOptions,
  useFileManagerStore,
  useStoreCell,
} from "./use-file-manager.js";

export interface CairnFileManagerProps extends UseFileManagerOptions {
  /** Forces light or dark; absent, the page's `prefers-color-scheme` decides. */
  readonly theme?: "light" | "dark" | undefined;
  readonly className?: string | undefined;
  readonly style?: CSSProperties | undefined;
}

interface MenuState {
  readonly point: { readonly x: number; readonly y: number };
  readonly entry: FileEntry | undefined;
}

/**
 * A sandbox's files: a folder tree beside the folder's entries (list or tiles), breadcrumbs,
 * a toolbar, a context menu; rename inline (F2), delete after a confirmation, new folder,
 * download by signed URL, move by drag or Ctrl+X/Ctrl+V, upload by dropping files. Live: what
 * changes in the sandbox shows up by itself.
 *
 * @example
 * <CairnProvider endpoint={endpoint} token={token} sandboxId={sandboxId}>
 *   <CairnFileManager onOpenFile={(entry) => setOpen(entry.path)} onDirectoryChange={setTarget} />
 * </CairnProvider>
 */
export function CairnFileManager(props: CairnFileManagerProps) {
  const store = useFileManagerStore(props, "CairnFileManager");
  const [menu, setMenu] = useState<MenuState | undefined>();
  const [deleting, setDeleting] = useState<readonly string[] | undefined>();
  const focusView = useRef<(() => void) | undefined>(undefined);
  const dragged = useRef<readonly string[]>([]);

  const closeMenu = useCallback(() => {
    setMenu(undefined);
    focusView.current?.();
  }, []);

  const actions = useMemo<FileManagerActions>(
    () => ({
      open: (entry) => store.open(entry),
      askDelete: (paths) => {
        if (paths.length > 0) setDeleting(paths);
      },
      download: (entry) => void downloadEntry(store, entry),
      newFolder: () => void store.createFolder(undefined, { rename: true }),
      openMenu: (point, entry) => setMenu({ point, entry }),
      startDrag: (paths, data) => {
        dragged.current = paths;
        data.effectAllowed = "copyMove";
        data.setData(entriesMime, JSON.stringify(paths));
        data.setData("text/plain", paths.join("\n"));
      },
      endDrag: () => {
        dragged.current = [];
      },
      canDrop: (directory, data) => {
        if (data.types.includes("Files")) return true;
        // Entries only while this file manager drags some: another page's drag is no target.
        if (!data.types.includes(entriesMime) || dragged.current.length === 0) return false;
        // Not into itself, nor into the folder it is already in.
        return dragged.current.every(
          (path) => !isWithin(directory, path) && parentOf(path) !== directory,
        );
      },
      drop: (directory, data) => {
        if (data.types.includes(entriesMime)) {
          // Only paths this file manager itself is dragging, inside its root: a drag from another
          // page could name any path, or be no JSON at all.
          const paths = draggedPaths(data.getData(entriesMime), store.root, dragged.current);
          dragged.current = [];
          if (paths.length > 0) void store.move(paths, directory);
        } else if (data.files.length > 0) {
          void store.upload([...data.files], directory);
        }
      },
    }),
    [store],
  );

  const rootClass = ["cairn-root", "cairn-file-manager", props.className].filter(Boolean).join(" ");
  return (
    <div className={rootClass} data-cairn-theme={props.theme} style={props.style}>
      <Toolbar store={store} actions={actions} />
      <Breadcrumbs store={store} />
      <div className="cairn-fm-body">
        <FolderTree store={store} actions={actions} />
        <FileView store={store} actions={actions} focusRef={focusView} />
      </div>
      <Alerts store={store} />
      <Progress store={store} />
      {menu !== undefined && (
        <ContextMenu
          label={
            menu.entry === undefined
              ? "Folder actions"
              : `Actions for ${visibleName(menu.entry.name)}`
          }
          items={menuItems(store, actions, menu.entry)}
          point={menu.point}
          onClose={closeMenu}
        />
      )}
      {deleting !== undefined && (
        <DeleteDialog
          paths={deleting}
          folders={
            store.entries
              .get()
              .filter((entry) => entry.type === "directory" && deleting.includes(entry.path)).length
          }
          onCancel={() => {
            setDeleting(undefined);
            focusView.current?.();
          }}
          onConfirm={() => {
            setDeleting(undefined);
            focusView.current?.();
            void store.remove(deleting);
          }}
        />
      )}
    </div>
  );
}

function menuItems(
  store: FileManagerStore,
  actions: FileManagerActions,
  entry: FileEntry | undefined,
): MenuItem[] {
  const pasteable = store.clipboard.get() !== undefined;
  const paste = { label: "Paste", disabled: !pasteable, run: () => void store.paste() };
  if (entry === undefined) {
    return [{ label: "New folder", run: actions.newFolder }, paste];
  }
  const selection = store.selection.get();
  const paths = selection.has(entry.path) ? [...selection] : [entry.path];
  return [
    { label: "Open", run: () => actions.open(entry) },
    { label: "Rename", disabled: paths.length > 1, run: () => store.startRename(entry.path) },
    {
      label: "Download",
      disabled: entry.type !== "file",
      run: () => actions.download(entry),
    },
    { label: "Cut", run: () => store.cut(paths) },
    {
      label: "Paste into folder",
      disabled: !pasteable || entry.type !== "directory",
      run: () => void store.paste(entry.path),
    },
    {
      label: paths.length > 1 ? `Delete ${paths.length} items` : "Delete",
      run: () => actions.askDelete(paths),
    },
  ];
}

function Alerts({ store }: { readonly store: FileManagerStore }) {
  const errors = useStoreCell(store.errors);
  if (errors.length === 0) return null;
  return (
    <div className="cairn-fm-alerts">
      {errors.map((error) => (
        <div key={error.id} role="alert" className="cairn-fm-alert">
          <span>{error.message}</span>
          <button
            type="button"
            className="cairn-button"
            aria-label={`Dismiss: ${error.message}`}
            onClick={() => store.dismissError(error.id)}
          >
            Dismiss
          </button>
        </div>
      ))}
    </div>
  );
}

const doing: Record<FileAction, string> = {
  open: "Opening",
  rename: "Renaming",
  delete: "Deleting",
  "create-folder": "Creating",
  move: "Moving",
  upload: "Uploading",
  download: "Preparing the download of",
};

/** What is under way, said politely (and shown while it lasts). */
function Progress({ store }: { readonly store: FileManagerStore }) {
  const operations = useStoreCell(store.operations);
  const first = operations[0];
  const text =
    first === undefined
      ? ""
      : operations.length === 1
        ? `${doing[first.action]} ${shownName(baseName(first.paths[0] ?? ""))}…`
        : `${operations.length} changes under way…`;
  return (
    <div role="status" className="cairn-fm-progress">
      {text}
    </div>
  );
}
