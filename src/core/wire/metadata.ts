/**
 * The `metadata` attribute (a JSON string) as the object the export format carries: a JSON
 * object as it is, any other value under `value`, nothing as `{}`.
 */
export function parseMetadata(value: unknown): Record<string, unknown> {
  if (typeof value !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { value: parsed };
  } catch {
    return { value };
  }
}
