// Tags as the create form takes them: one key=value per line.

/** The tags of the form's text, or what is wrong with a line (the API checks keys and values). */
export function parseTags(
  text: string,
): { readonly tags: Record<string, string> } | { readonly problem: string } {
  const tags = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const split = line.indexOf("=");
    if (split <= 0) {
      return {
        problem: `Tags, line ${index + 1} (“${line}”): write each tag as key=value, one a line`,
      };
    }
    const key = line.slice(0, split).trim();
    if (tags.has(key)) {
      return { problem: `Tags, line ${index + 1}: the key “${key}” is given twice` };
    }
    tags.set(key, line.slice(split + 1).trim());
  }
  return { tags: Object.fromEntries(tags) };
}

/** "team=search", for a badge or a filter. */
export function tagText(key: string, value: string): string {
  return `${key}=${value}`;
}
