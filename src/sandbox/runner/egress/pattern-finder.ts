// Finds whether any of a few byte patterns occurs in a buffer, in one pass for all of them:
// Wu–Manber's shift table over 3-byte groups. A window as long as the shortest pattern slides
// along the buffer; the last three bytes under it say how far it may move without passing over
// the start of an occurrence, which for text that is not a secret is most of the window. Only
// where a pattern's window could end is anything compared. For a secret's forms (4 to 10
// patterns) over 64 KiB of text, this costs a quarter to a third of one native search per
// pattern.

// Three bytes to an index into a table of 65,536 (different groups may share one: that only
// shortens a shift).
const groupHash = (first: number, second: number, third: number) =>
  (first << 8) ^ (second << 4) ^ third;

// Below this many bytes, a native search per pattern costs less than making the table, which
// an answer that small (most are) then never needs.
const searchNativelyBelow = 16 * 1024;

/**
 * How far a window may move when its last three bytes hash to an index: never past an
 * occurrence's end, so the least over every pattern whose window has those bytes there; and
 * the patterns whose window ends with each group.
 */
class ShiftTable {
  readonly shift = new Uint8Array(0x10000);
  readonly endingWith = new Map<number, Buffer[]>();

  constructor(patterns: readonly Buffer[], window: number) {
    this.shift.fill(window - 2);
    for (const pattern of patterns) {
      for (let end = 2; end < window; end++) {
        const hash = groupAt(pattern, end);
        this.shift[hash] = Math.min(this.shift[hash] as number, window - 1 - end);
      }
      const last = groupAt(pattern, window - 1);
      this.endingWith.set(last, [...(this.endingWith.get(last) ?? []), pattern]);
    }
  }
}

/** The patterns of a set, and what a search for them needs. */
export class PatternFinder {
  /** How long the longest pattern is. */
  readonly longest: number;
  private readonly window: number;
  private readonly firstBytes: ReadonlySet<number>;
  private table: ShiftTable | undefined;
  private budget = 0;

  constructor(private readonly patterns: readonly Buffer[]) {
    if (patterns.length === 0 || patterns.some((pattern) => pattern.length < 3)) {
      throw new Error("a pattern finder needs patterns of at least 3 bytes");
    }
    this.longest = Math.max(...patterns.map((pattern) => pattern.length));
    // A shift is kept in a byte: windows longer than 257 bytes search as if they were 257.
    this.window = Math.min(257, ...patterns.map((pattern) => pattern.length));
    this.firstBytes = new Set(patterns.map((pattern) => pattern[0] as number));
  }

  /** Whether a whole pattern occurs anywhere in `bytes`. */
  occursIn(bytes: Buffer): boolean {
    const length = bytes.length;
    if (length < searchNativelyBelow) return this.searchNatively(bytes);
    this.table ??= new ShiftTable(this.patterns, this.window);
    const table = this.table;
    const { window } = this;
    const { shift } = table;
    // Comparing is cheap while candidates are rare; text made to look like a pattern everywhere
    // would make it quadratic, so past a byte compared per byte the native search takes over.
    this.budget = length;
    // Two windows slide at once, one over each half (by where windows end): a step waits on its
    // own loads, so two independent steps take little longer than one.
    const middle = Math.max(window - 1, length >> 1);
    let first = window - 1;
    let second = middle;
    while (first < middle && second < length) {
      const firstMove = shift[groupAt(bytes, first)] as number;
      const secondMove = shift[groupAt(bytes, second)] as number;
      if (firstMove === 0 || secondMove === 0) {
        if (firstMove === 0 && this.startsAt(table, bytes, first)) return true;
        if (secondMove === 0 && this.startsAt(table, bytes, second)) return true;
        if (this.budget < 0) return this.searchNatively(bytes);
      }
      first += firstMove === 0 ? 1 : firstMove;
      second += secondMove === 0 ? 1 : secondMove;
    }
    return this.slide(table, bytes, first, middle) || this.slide(table, bytes, second, length);
  }

  // One window, from window end `end` to before `stop`.
  private slide(table: ShiftTable, bytes: Buffer, end: number, stop: number): boolean {
    const { shift } = table;
    while (end < stop) {
      const move = shift[groupAt(bytes, end)] as number;
      if (move === 0) {
        if (this.startsAt(table, bytes, end)) return true;
        if (this.budget < 0) return this.searchNatively(bytes);
      }
      end += move === 0 ? 1 : move;
    }
    return false;
  }

  // Whether a pattern starts where the window that ends at `end` starts.
  private startsAt(table: ShiftTable, bytes: Buffer, end: number): boolean {
    const start = end - this.window + 1;
    for (const pattern of table.endingWith.get(groupAt(bytes, end)) ?? []) {
      const compared = matchLength(bytes, start, pattern);
      if (compared === pattern.length) return true;
      this.budget -= compared + 1;
    }
    return false;
  }

  private searchNatively(bytes: Buffer): boolean {
    return this.patterns.some((pattern) => bytes.includes(pattern));
  }

  /**
   * How many bytes at the end of `bytes` are the beginning of a pattern (and not all of it): the
   * most that an occurrence continuing in the next chunk could have in this one.
   */
  pendingLength(bytes: Buffer): number {
    const length = bytes.length;
    for (let start = Math.max(0, length - this.longest + 1); start < length; start++) {
      if (!this.firstBytes.has(bytes[start] as number)) continue;
      const rest = length - start;
      for (const pattern of this.patterns) {
        if (pattern.length > rest && matchLength(bytes, start, pattern) === rest) return rest;
      }
    }
    return 0;
  }
}

// The index of the three bytes that end at `end`.
function groupAt(bytes: Buffer, end: number): number {
  return groupHash(bytes[end - 2] as number, bytes[end - 1] as number, bytes[end] as number);
}

/** How many bytes of `pattern` `bytes` has from `start` on, up to the first that differs. */
function matchLength(bytes: Buffer, start: number, pattern: Buffer): number {
  const most = Math.min(pattern.length, bytes.length - start);
  let index = 0;
  while (index < most && bytes[start + index] === pattern[index]) index++;
  return index;
}
