// Absolute POSIX paths of a sandbox, as the files API names them.

/** The directory that holds `path` ("/" for a top-level name). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

/** The last segment of `path`. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1) || path;
}

export function joinPath(directory: string, name: string): string {
  return directory === "/" ? `/${name}` : `${directory}/${name}`;
}

/** Whether `path` is `directory` or lies below it. */
export function isWithin(path: string, directory: string): boolean {
  // "/workspace/../etc" starts like a path inside, and is not.
  if (path.split("/").some((part) => part === ".." || part === ".")) return false;
  return path === directory || path.startsWith(directory === "/" ? "/" : `${directory}/`);
}

/** `root`, then each directory down to `path` (just `root` when `path` is not under it). */
export function pathTrail(root: string, path: string): string[] {
  if (!isWithin(path, root)) return [root];
  const trail = [root];
  const rest = path.slice(root.length).split("/").filter(Boolean);
  for (const segment of rest) trail.push(joinPath(trail[trail.length - 1] as string, segment));
  return trail;
}

/**
 * `path` absolute, its `.` and `..` parts resolved and without a trailing slash; relative paths
 * are taken under `root`. Only `/` separates (a `\` is a character of a Linux name).
 */
export function normalizePath(root: string, path: string): string {
  const parts: string[] = [];
  for (const part of (path.startsWith("/") ? path : joinPath(root, path)).split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "" && part !== ".") parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/**
 * The paths a drop of entries names (`application/x-cairn-paths`: a JSON list), kept only when
 * they are inside `root` and among the entries this file manager itself is `dragging`: a drag
 * from another page can name any path, or carry no JSON at all. Anything else gives none.
 */
export function draggedPaths(
  raw: string,
  root: string,
  dragging: readonly string[],
): readonly string[] {
  let named: unknown;
  try {
    named = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(named) || !named.every((path) => typeof path === "string")) return [];
  const paths = named.map((path: string) => normalizePath(root, path));
  const known = new Set(dragging);
  return paths.every((path) => isWithin(path, root) && path !== root && known.has(path))
    ? paths
    : [];
}
