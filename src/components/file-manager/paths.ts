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

/** `path` without a trailing slash; relative paths are taken under `root`. */
export function normalizePath(root: string, path: string): string {
  const absolute = path.startsWith("/") ? path : joinPath(root, path);
  return absolute.replace(/\/+/g, "/").replace(/(.)\/$/, "$1");
}
