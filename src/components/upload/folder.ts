import type { UploadInput } from "./upload-store.js";

// The File and Directory Entries API, as much of it as a drop needs (lib.dom's names differ
// between TypeScript versions, so they are spelled here).
interface Entry {
  readonly isFile: boolean;
  readonly isDirectory: boolean;
  readonly name: string;
  readonly fullPath: string;
}
interface FileEntryLike extends Entry {
  file(success: (file: File) => void, failure?: (error: unknown) => void): void;
}
interface DirectoryEntryLike extends Entry {
  createReader(): {
    readEntries(success: (entries: Entry[]) => void, failure?: (error: unknown) => void): void;
  };
}

async function readEntry(entry: Entry, into: UploadInput[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) =>
      (entry as FileEntryLike).file(resolve, reject),
    );
    into.push({ file, relativePath: entry.fullPath.replace(/^\/+/, "") || file.name });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as DirectoryEntryLike).createReader();
  // readEntries answers in batches (100 in Chrome) until an empty one.
  for (;;) {
    const batch = await new Promise<Entry[]>((resolve, reject) =>
      reader.readEntries(resolve, reject),
    );
    if (batch.length === 0) return;
    for (const child of batch) await readEntry(child, into);
  }
}

/**
 * The files of a drop or a paste, folders walked with their tree kept as relative paths
 * ("photos/2024/a.png"). The entries are taken before the first await: a DataTransfer's items
 * are emptied once its event returns.
 */
export async function filesFromDataTransfer(transfer: DataTransfer): Promise<UploadInput[]> {
  const items = [...(transfer.items ?? [])].filter((item) => item.kind === "file");
  const entries = items.map(
    (item) => (item as { webkitGetAsEntry?: () => Entry | null }).webkitGetAsEntry?.() ?? null,
  );
  if (entries.length === 0 || entries.some((entry) => entry === null)) {
    return [...transfer.files].map((file) => ({ file, relativePath: relativePathOf(file) }));
  }
  const into: UploadInput[] = [];
  for (const entry of entries) if (entry !== null) await readEntry(entry, into);
  return into;
}

/** A picked file's path inside a picked folder (`webkitdirectory`), else its name. */
export const relativePathOf = (file: File): string =>
  (file as { webkitRelativePath?: string }).webkitRelativePath || file.name;
