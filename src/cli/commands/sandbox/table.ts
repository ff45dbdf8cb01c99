/**
 * Columns padded to their widest cell; columns named in `rightAligned` line up their digits.
 * A `footer` row (totals) comes after a rule.
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: { rightAligned?: ReadonlySet<number>; footer?: readonly string[] } = {},
): string {
  const rightAligned = options.rightAligned ?? new Set<number>();
  const all = options.footer === undefined ? rows : [...rows, options.footer];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...all.map((cells) => (cells[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        rightAligned.has(column)
          ? cell.padStart(widths[column] ?? 0)
          : cell.padEnd(widths[column] ?? 0),
      )
      .join("  ")
      .trimEnd();
  const footer =
    options.footer === undefined
      ? []
      : [widths.map((width) => "-".repeat(width)).join("  "), line(options.footer)];
  return `${[line(header), ...rows.map(line), ...footer].join("\n")}\n`;
}

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
