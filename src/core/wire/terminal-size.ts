import { z } from "zod";

/** The most columns (or rows) a terminal may have. */
export const maxTerminalSide = 1000;

const side = z.number().int().min(1).max(maxTerminalSide);

/** The columns and rows of an exec's terminal: what `pty` asks for and `resize` changes to. */
export const terminalSizeSchema = z.strictObject({ cols: side, rows: side });
export type TerminalSize = z.infer<typeof terminalSizeSchema>;

/** The terminal of `pty: true`, and of a client that has no terminal of its own to measure. */
export const defaultTerminalSize: Readonly<TerminalSize> = { cols: 80, rows: 24 };

/** The terminal an exec's `pty` option asks for: `true` is the default size, `false` none. */
export function terminalOf(
  pty: boolean | Readonly<TerminalSize> | undefined,
): TerminalSize | undefined {
  if (pty === true) return { ...defaultTerminalSize };
  return pty === false || pty === undefined ? undefined : { cols: pty.cols, rows: pty.rows };
}
