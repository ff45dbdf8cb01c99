/**
 * How deep a span's metadata may nest objects and arrays (as OTLP attribute values may): deeper
 * JSON is more than the stores write back out (JSON.stringify recurses), and no caller's.
 */
export const maxMetadataDepth = 64;

/**
 * Whether a JSON value nests objects and arrays more than `limit` levels deep (the value itself
 * being the first). Walks without recursion: JSON.parse takes any depth.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 1; ; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item !== "object" || item === null) continue;
      if (depth > limit) return true;
      for (const child of Object.values(item)) next.push(child);
    }
    if (next.length === 0) return false;
    level = next;
  }
}

/**
 * The `metadata` attribute (a JSON string) as the object the export format carries: a JSON
 * object as it is, any other value under `value`, nothing as `{}`.
 */
export function parseMetadata(value: unknown): Record<string, unknown> {
  if (typeof value !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(value);
    // Nested deeper than the export format takes, it stays the text it came as.
    if (nestsDeeperThan(parsed, maxMetadataDepth)) return { value };
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { value: parsed };
  } catch {
    return { value };
  }
}
