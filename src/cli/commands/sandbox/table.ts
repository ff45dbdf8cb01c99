/** 1024 → "1 GB", 1536 → "1536 MB". */
export function formatMegabytes(megabytes: number): string {
  return megabytes % 1024 === 0 ? `${megabytes / 1024} GB` : `${megabytes} MB`;
}

/** An ISO time as "YYYY-MM-DD HH:MM:SS", in UTC like the API. */
export function formatTime(iso: string): string {
  return iso.replace("T", " ").slice(0, 19);
}

/** A record as the `--json` output: indented, one trailing newline. */
export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
