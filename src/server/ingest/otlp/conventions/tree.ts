import type { AttributeReader } from "../attribute-reader.js";
import type { WireValue } from "../otlp-records.js";

/** Flattened attributes put back together: `a.0.b` and `a.1.b` become `[{b}, {b}]`. */
export type Tree = WireValue | null | Tree[] | { [key: string]: Tree };

/**
 * The attributes under `prefix.` as one value: dotted names become nested objects and
 * integer segments array positions, as OpenInference (`llm.input_messages.0.message.role`) and
 * the previous GenAI conventions (`gen_ai.prompt.0.content`) flatten lists. Undefined when the
 * span has none.
 */
export function subtree(reader: AttributeReader, prefix: string): Tree | undefined {
  const keys = reader.keysUnder(`${prefix}.`);
  if (keys.length === 0) return undefined;
  const root: Record<string, Tree> = {};
  for (const key of keys) {
    const path = key.slice(prefix.length + 1).split(".");
    let node: Record<string, Tree> = root;
    for (const [index, segment] of path.entries()) {
      if (index === path.length - 1) {
        node[segment] = reader.get(key) ?? null;
        break;
      }
      const next = node[segment];
      if (typeof next !== "object" || next === null || Array.isArray(next)) {
        const created: Record<string, Tree> = {};
        node[segment] = created;
        node = created;
      } else node = next as Record<string, Tree>;
    }
  }
  return arrays(root);
}

// Objects whose keys are all integers are lists, in index order.
function arrays(node: Tree): Tree {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return node;
  const entries = Object.entries(node).map(([key, value]) => [key, arrays(value)] as const);
  if (entries.length > 0 && entries.every(([key]) => /^\d{1,6}$/.test(key))) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, value]) => value);
  }
  return Object.fromEntries(entries);
}

/** The list at a path of a tree (a single item reads as a list of one). */
export function listAt(tree: Tree | undefined, ...path: string[]): Tree[] {
  const node = at(tree, ...path);
  if (node === undefined || node === null) return [];
  return Array.isArray(node) ? node : [node];
}

/** The node at a path of a tree. */
export function at(tree: Tree | undefined, ...path: string[]): Tree | undefined {
  let node: Tree | undefined = tree;
  for (const segment of path) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, Tree>)[segment];
  }
  return node;
}

/** The string at a path, or undefined. */
export function stringAt(tree: Tree | undefined, ...path: string[]): string | undefined {
  const node = at(tree, ...path);
  return typeof node === "string" ? node : undefined;
}

/** The number at a path (or its decimal string), or undefined. */
export function numberAt(tree: Tree | undefined, ...path: string[]): number | undefined {
  const node = at(tree, ...path);
  if (typeof node === "number" && Number.isFinite(node)) return node;
  if (typeof node === "string" && node.trim() !== "" && Number.isFinite(Number(node))) {
    return Number(node);
  }
  return undefined;
}

/** JSON text parsed, or undefined when it is not JSON. */
export function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[" && start !== '"') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A value as text: strings as they are, anything else as JSON. */
export function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}
