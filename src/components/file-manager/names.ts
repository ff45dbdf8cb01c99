import type { FileEntry } from "../client/files.js";

/**
 * Why `name` cannot be given to an entry of a folder holding `siblings`, or undefined when it
 * can. `current` is the entry's own name when renaming, which it may keep.
 */
export function nameProblem(
  name: string,
  siblings: readonly FileEntry[],
  current?: string,
): string | undefined {
  if (name.trim() === "") return "Give a name: it cannot be empty.";
  if (name.includes("/")) return "A name cannot contain “/”.";
  if (name.includes("\0")) return "A name cannot contain a NUL character.";
  if (name === "." || name === "..") return `“${name}” is not a name a file can have.`;
  if (new TextEncoder().encode(name).length > 255) return "A name is at most 255 bytes long.";
  if (name !== current && siblings.some((entry) => entry.name === name)) {
    return `“${name}” already exists in this folder: choose another name.`;
  }
  return undefined;
}

/** `base`, or `base 2`, `base 3` … whichever is free among `siblings`. */
export function freeName(base: string, siblings: readonly FileEntry[]): string {
  const taken = new Set(siblings.map((entry) => entry.name));
  if (!taken.has(base)) return base;
  for (let index = 2; ; index++) {
    const candidate = `${base} ${index}`;
    if (!taken.has(candidate)) return candidate;
  }
}
