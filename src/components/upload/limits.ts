// What an upload may be, checked before anything is sent: messages name the file and the limit.

/** "12.4 MB", "980 KB", "17 B": binary units, as file managers show sizes. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded} ${units[unit]}`;
}

/** `accept` as the file input takes it ("image/*,.pdf") or as a list, split and lower-cased. */
export function acceptList(accept: string | readonly string[] | undefined): string[] {
  const list = typeof accept === "string" ? accept.split(",") : (accept ?? []);
  return list.map((type) => type.trim().toLowerCase()).filter((type) => type !== "");
}

/** Whether a file is one of the accepted types: an extension (".pdf"), a MIME type or "image/*". */
export function isAccepted(
  file: { readonly name: string; readonly type: string },
  accepted: readonly string[],
): boolean {
  if (accepted.length === 0) return true;
  const name = file.name.toLowerCase();
  const type = file.type.toLowerCase();
  return accepted.some((pattern) =>
    pattern.startsWith(".")
      ? name.endsWith(pattern)
      : pattern.endsWith("/*")
        ? type.startsWith(pattern.slice(0, -1))
        : type === pattern,
  );
}

export interface UploadLimits {
  readonly accept?: string | readonly string[] | undefined;
  /** Bytes. */
  readonly maxFileSize?: number | undefined;
}

/** Why a file may not be uploaded, in a sentence that names the limit; undefined if it may. */
export function limitViolation(
  file: { readonly name: string; readonly type: string; readonly size: number },
  limits: UploadLimits,
): string | undefined {
  if (limits.maxFileSize !== undefined && file.size > limits.maxFileSize) {
    return `${file.name} is ${formatSize(file.size)}; the limit is ${formatSize(limits.maxFileSize)}`;
  }
  const accepted = acceptList(limits.accept);
  if (!isAccepted(file, accepted)) {
    return `${file.name} is not an accepted type; accepted: ${accepted.join(", ")}`;
  }
  return undefined;
}

/** The sentence for a file past `maxFiles`. */
export const tooManyFiles = (name: string, maxFiles: number): string =>
  `${name} was not added: the limit is ${maxFiles} file${maxFiles === 1 ? "" : "s"}`;
