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

/** The entries in `order`, a new array; ties fall back to the name, A to Z. */
export function sortEntries(entries: readonly FileEntry[], order: SortOrder): FileEntry[] {
  const sign = order.direction === "asc" ? 1 : -1;
  const foldersFirst = order.foldersFirst ?? true;
  // Times parsed once each, not once per comparison (10,000 entries: 140,000 comparisons).
  const times =
    order.key === "modified"
      ? new Map(entries.map((entry) => [entry, Date.parse(entry.mtime) || 0]))
      : undefined;
  const byKey = (a: FileEntry, b: FileEntry): number => {
    if (order.key === "size") return a.size - b.size;
    if (times !== undefined) return (times.get(a) ?? 0) - (times.get(b) ?? 0);
    return 0;
  };
  return [...entries].sort((a, b) => {
    if (foldersFirst) {
      const folder = Number(b.type === "directory") - Number(a.type === "directory");
      if (folder !== 0) return folder;
    }
    // Ties (folders all 4 kB, files of one size) stay in name order whichever the direction.
    if (order.key === "name") return sign * compareNames(a.name, b.name);
    return sign * byKey(a, b) || compareNames(a.name, b.name);
  });
}
