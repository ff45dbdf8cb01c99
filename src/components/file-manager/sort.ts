import type { FileEntry } from "../client/files.js";

export type SortKey = "name" | "size" | "modified";
export type SortDirection = "asc" | "desc";

export interface SortOrder {
  readonly key: SortKey;
  readonly direction: SortDirection;
  /** Directories before files whatever the key (default true). */
  readonly foldersFirst?: boolean | undefined;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

/** Names compared as people read them: "file2" before "file10", case aside. */
export const compareNames = (a: string, b: string): number =>
  collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);

/** The entries in `order`, a new array; ties fall back to the name. */
export function sortEntries(entries: readonly FileEntry[], order: SortOrder): FileEntry[] {
  const sign = order.direction === "asc" ? 1 : -1;
  const foldersFirst = order.foldersFirst ?? true;
  const byKey = (a: FileEntry, b: FileEntry): number => {
    if (order.key === "size") return a.size - b.size;
    if (order.key === "modified") return Date.parse(a.mtime) - Date.parse(b.mtime);
    return 0;
  };
  return [...entries].sort((a, b) => {
    if (foldersFirst) {
      const folder = Number(b.type === "directory") - Number(a.type === "directory");
      if (folder !== 0) return folder;
    }
    return sign * (byKey(a, b) || compareNames(a.name, b.name));
  });
}
