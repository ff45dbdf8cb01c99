// Finds a package's main module the way `import("name")` would from the workspace: its
// package.json `exports` (".", with the conditions node, import, default, require), else
// `main`, else index.js. The core is not inside the workspace's node_modules tree, so it cannot
// just import the bare name.

import { readFile, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";

const conditions = new Set(["node", "import", "module-sync", "default", "require"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The target of `exports` for ".": a relative path, or undefined. */
function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (Array.isArray(exports)) {
    for (const entry of exports) {
      const target = exportTarget(entry);
      if (target !== undefined) return target;
    }
    return undefined;
  }
  if (!isRecord(exports)) return undefined;
  const keys = Object.keys(exports);
  if (keys.some((key) => key.startsWith("."))) return exportTarget(exports["."]);
  // Conditions are tried in the object's order, as Node does.
  for (const key of keys) {
    if (!conditions.has(key)) continue;
    const target = exportTarget(exports[key]);
    if (target !== undefined) return target;
  }
  return undefined;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() === true;
}

/** The main module's absolute path; throws a sentence saying what is missing. */
export async function packageEntry(directory: string): Promise<string> {
  const manifestPath = join(directory, "package.json");
  const text = await readFile(manifestPath, "utf8").catch(() => undefined);
  if (text === undefined) throw new Error(`it is not installed (no ${manifestPath})`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new Error(`its package.json is not JSON`);
  }
  if (!isRecord(manifest)) throw new Error("its package.json is not an object");
  let candidates: string[];
  if (manifest.exports !== undefined) {
    const target = exportTarget(manifest.exports);
    if (target === undefined) {
      throw new Error(`its package.json "exports" has no "." entry for import`);
    }
    candidates = [target];
  } else {
    const main = typeof manifest.main === "string" ? manifest.main : "index.js";
    candidates = [main, `${main}.js`, `${main}.mjs`, `${main}.cjs`, join(main, "index.js")];
  }
  for (const candidate of candidates) {
    const path = resolve(directory, candidate);
    if (!path.startsWith(`${directory}${sep}`)) continue;
    if (await isFile(path)) return path;
  }
  throw new Error(`its main module ${candidates[0]} does not exist`);
}
