// A plain-text table for terminals: the test report and the CLI's listings. It lives beside the
// report, which the SDK exports (formatTestReport) and so cannot import from the CLI.

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
