import { log } from "../../../core/logger.js";

/** Which of an exec's outputs a line came from. */
export type ExecStream = "stdout" | "stderr";

/** Default longest line kept whole: 16 MiB. */
export const defaultMaxLineBytes = 16 * 1024 * 1024;

interface Pending {
  parts: Uint8Array[];
  bytes: number;
  /** Past the longest line: what comes until the next newline is dropped. */
  cut: boolean;
}

/**
 * Splits an exec's output into lines per stream, as the chunks come: each line decoded as UTF-8
 * without its `\n` (nor a `\r` before it), a line longer than `maxLineBytes` cut there (the
 * rest, up to its newline, dropped), and the last unfinished line of each stream given at
 * {@link end}. A newline byte is never part of a multi-byte character, so a line's bytes are
 * whole characters however the chunks fell.
 */
export class LineSplitter {
  private readonly pending: Record<ExecStream, Pending> = {
    stdout: { parts: [], bytes: 0, cut: false },
    stderr: { parts: [], bytes: 0, cut: false },
  };

  constructor(
    private readonly onLine: (stream: ExecStream, line: string) => void,
    private readonly maxLineBytes = defaultMaxLineBytes,
  ) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive whole number, got ${maxLineBytes}`);
    }
  }

  write(channel: 1 | 2, bytes: Uint8Array): void {
    const stream: ExecStream = channel === 1 ? "stdout" : "stderr";
    const pending = this.pending[stream];
    let from = 0;
    while (from < bytes.byteLength) {
      const newline = bytes.indexOf(10, from);
      const to = newline === -1 ? bytes.byteLength : newline;
      this.keep(pending, bytes.subarray(from, to));
      if (newline === -1) return;
      this.flush(stream);
      from = newline + 1;
    }
  }

  /** Gives the unfinished line of each stream, if any: the exec has ended. */
  end(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const pending = this.pending[stream];
      if (pending.bytes > 0 || pending.cut) this.flush(stream);
    }
  }

  private keep(pending: Pending, piece: Uint8Array): void {
    if (pending.cut || piece.byteLength === 0) return;
    const room = this.maxLineBytes - pending.bytes;
    const kept = piece.byteLength > room ? piece.subarray(0, room) : piece;
    // A copy: the pipe's chunk may be reused.
    pending.parts.push(Uint8Array.prototype.slice.call(kept));
    pending.bytes += kept.byteLength;
    if (piece.byteLength > room) pending.cut = true;
  }

  private flush(stream: ExecStream): void {
    const pending = this.pending[stream];
    let line = Buffer.concat(pending.parts, pending.bytes).toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    pending.parts = [];
    pending.bytes = 0;
    pending.cut = false;
    try {
      this.onLine(stream, line);
    } catch (error) {
      // The caller's fault must not end the exec's reading (nor the runner, from an event).
      log.error("an exec's line listener failed", error);
    }
  }
}
