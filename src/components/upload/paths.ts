// Where an upload goes in the sandbox, and the names a conflict policy tries.

const root = "/workspace";

/**
 * Where a file goes: `directory` (its `.` and `..` resolved, inside /workspace) joined with the
 * file's relative path from a drop or a picker, whose parts are separated by `/` only (a `\` is a
 * character of a Linux name). Undefined, with the reason, when that is not a place a file can
 * have: a directory outside /workspace, a part `.` or `..`, a part over 255 bytes.
 */
export function targetPath(
  directory: string,
  relativePath: string,
): { readonly path: string } | { readonly problem: string } {
  const folder: string[] = [];
  for (const part of directory.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") folder.pop();
    else folder.push(part);
  }
  const base = `/${folder.join("/")}`;
  if (base !== root && !base.startsWith(`${root}/`)) {
    return { problem: `the folder ${directory} is outside ${root}` };
  }
  const parts = relativePath.split("/").filter((part) => part !== "");
  if (parts.length === 0 || parts.some((part) => part === "." || part === "..")) {
    return { problem: `“${relativePath}” is not a name a file can have` };
  }
  const long = parts.find((part) => new TextEncoder().encode(part).length > 255);
  if (long !== undefined) {
    return {
      problem: `a name may have at most 255 bytes; this one has ${new TextEncoder().encode(long).length}`,
    };
  }
  return { path: `${base}/${parts.join("/")}` };
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
