// Where an upload goes in the sandbox, and the names a conflict policy tries.

/** `directory` joined with a relative path from a drop or a picker, without `.`, `..` or empties. */
export function targetPath(directory: string, relativePath: string): string {
  const segments = relativePath
    .split(/[/\\]+/)
    .filter((segment) => segment !== "" && segment !== "." && segment !== "..");
  return `${directory.replace(/\/+$/, "")}/${segments.join("/")}`;
}

/** The parent directory of an absolute path. */
export const parentOf = (path: string): string => path.slice(0, path.lastIndexOf("/")) || "/";

/**
 * The `n`th other name for a path that exists: "report (1).pdf", "archive (2).tar.gz",
 * ".env (1)", "Makefile (3)" — the number before the extension, as browsers name downloads.
 */
export function renamedPath(path: string, n: number): string {
  const slash = path.lastIndexOf("/");
  const name = path.slice(slash + 1);
  const match = /^(.+?)((?:\.tar)?\.[^.]+)?$/.exec(name.startsWith(".") ? name.slice(1) : name);
  const lead = name.startsWith(".") ? "." : "";
  const stem = `${lead}${match?.[1] ?? ""}`;
  const extension = match?.[2] ?? "";
  return `${path.slice(0, slash + 1)}${stem} (${n})${extension}`;
}

/**
 * The delay before automatic attempt `attempt + 1` after `attempt` failed: doubling from `base`,
 * at most `max` (1 s, 2 s, 4 s … 30 s).
 */
export const backoffDelay = (attempt: number, base = 1000, max = 30_000): number =>
  Math.min(max, base * 2 ** Math.max(0, attempt - 1));
