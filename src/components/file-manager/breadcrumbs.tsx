import { visibleName } from "../client/names.js";
import type { FileManagerStore } from "./file-manager-store.js";
import { baseName, pathTrail } from "./paths.js";
import { useStoreCell } from "./use-file-manager.js";

/** Where the current folder is, each folder above it one click away. */
export function Breadcrumbs({ store }: { readonly store: FileManagerStore }) {
  const path = useStoreCell(store.path);
  const trail = pathTrail(store.root, path);
  return (
    <nav aria-label="Folder path" className="cairn-fm-breadcrumbs">
      <ol>
        {trail.map((folder, index) =>
          index === trail.length - 1 ? (
            <li key={folder}>
              <span aria-current="page">{visibleName(baseName(folder))}</span>
            </li>
          ) : (
            <li key={folder}>
              <button
                type="button"
                className="cairn-fm-crumb"
                onClick={() => store.navigate(folder)}
              >
                {visibleName(baseName(folder))}
              </button>
              <span aria-hidden="true" className="cairn-fm-separator">
                /
              </span>
            </li>
          ),
        )}
      </ol>
    </nav>
  );
}
