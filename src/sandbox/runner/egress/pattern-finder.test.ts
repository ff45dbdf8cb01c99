import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../test/helpers/bytes.js";
import { PatternFinder } from "./pattern-finder.js";

/** Bytes from a seeded generator (a failure repeats), any byte or those of `alphabet`. */
function randomBytes(seed: number, length: number, alphabet?: Buffer): Buffer {
  const next = seededRandom(seed);
  const pick = (count: number) => Math.floor(next() * count);
  return Buffer.from(
    Array.from({ length }, () =>
      alphabet === undefined ? pick(256) : (alphabet[pick(alphabet.length)] as number),
    ),
  );
}

const naivelyOccurs = (bytes: Buffer, patterns: readonly Buffer[]) =>
  patterns.some((pattern) => bytes.includes(pattern));

function naivePending(bytes: Buffer, patterns: readonly Buffer[]): number {
  for (let start = 0; start < bytes.length; start++) {
    const rest = bytes.subarray(start);
    if (
      patterns.some(
        (pattern) => pattern.length > rest.length && pattern.subarray(0, rest.length).equals(rest),
      )
    ) {
      return rest.length;
    }
  }
  return 0;
}

// Patterns of every byte value, of different lengths, one the start of another, with repeated
// groups (so that shifts are short and candidates many).
const patterns = [
  Buffer.from("sk-live-0123456789abcdef0123", "latin1"),
  Buffer.from("sk-live-0123456789abcdef0123-and-more", "latin1"),
  Buffer.from([0x00, 0xff, 0x00, 0xff, 0x80, 0x7f, 0x00, 0x01, 0xfe, 0xff, 0x00, 0x00]),
  Buffer.from("abababababababab", "latin1"),
  randomBytes(7, 40),
];
const finder = new PatternFinder(patterns);

describe("PatternFinder", () => {
  it("finds each pattern at every offset, in either half of a long buffer, and nothing else", () => {
    // Short buffers are searched natively, long ones (16 KiB and more) with the shift table, by
    // two windows at once: every offset near the start, the middle and the end of those.
    const near = (length: number, width: number) => {
      const offsets = new Set<number>();
      for (const center of [0, length >> 1, length - width]) {
        const last = Math.min(length - width, center + 40);
        for (let at = Math.max(0, center - 40); at <= last; at++) offsets.add(at);
      }
      return offsets;
    };
    for (const [index, pattern] of patterns.entries()) {
      for (const length of [pattern.length, pattern.length + 1, 200, 16 * 1024, 40_001]) {
        const base = randomBytes(index * 100 + length, length);
        for (const at of near(length, pattern.length)) {
          const bytes = Buffer.from(base);
          pattern.copy(bytes, at);
          expect(finder.occursIn(bytes), `at ${at} of ${length}`).toBe(true);
          // One byte of it changed, anywhere: no longer found (unless it happens to be there).
          for (const changed of [at, at + (pattern.length >> 1), at + pattern.length - 1]) {
            const broken = Buffer.from(bytes);
            broken[changed] = (broken[changed] ?? 0) ^ 0x55;
            expect(finder.occursIn(broken)).toBe(naivelyOccurs(broken, patterns));
          }
        }
      }
    }
  });

  it("agrees with a plain search on random bytes 0x00-0xff and on text close to the patterns", () => {
    const alphabets = [
      undefined,
      Buffer.from("ab", "latin1"),
      Buffer.from("sk-live0123456789abcdef", "latin1"),
      Buffer.from([0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe]),
    ];
    for (const [index, alphabet] of alphabets.entries()) {
      for (let round = 0; round < 300; round++) {
        const length = round % 10 === 0 ? 16 * 1024 + ((round * 997) % 20_000) : (round * 37) % 600;
        const bytes = randomBytes(index * 1000 + round + 1, length, alphabet);
        if (round % 3 === 0 && bytes.length > 50) {
          const pattern = patterns[round % patterns.length] as Buffer;
          pattern.copy(bytes, (round * 13) % bytes.length);
        }
        expect(finder.occursIn(bytes)).toBe(naivelyOccurs(bytes, patterns));
        expect(finder.pendingLength(bytes)).toBe(naivePending(bytes, patterns));
      }
    }
  });

  it("stays right on text made of a pattern's beginning over and over", () => {
    const value = patterns[0] as Buffer;
    const almost = value.subarray(0, value.length - 1);
    const bytes = Buffer.alloc(64 * 1024, almost);
    expect(finder.occursIn(bytes)).toBe(false);
    value.copy(bytes, bytes.length - value.length - 3);
    expect(finder.occursIn(bytes)).toBe(true);
    const pairs = Buffer.alloc(64 * 1024, "ab");
    expect(finder.occursIn(pairs)).toBe(true);
    expect(finder.occursIn(Buffer.alloc(64 * 1024, "a"))).toBe(false);
  });

  it("says how much of a pattern's beginning ends a buffer, however short", () => {
    const value = patterns[1] as Buffer;
    for (let kept = 1; kept < value.length; kept++) {
      const bytes = Buffer.concat([Buffer.from("xyz"), value.subarray(0, kept)]);
      expect(finder.pendingLength(bytes)).toBe(kept);
      expect(finder.pendingLength(value.subarray(0, kept))).toBe(kept);
    }
    // The whole of a pattern is found, not pending; what follows it may begin another.
    expect(finder.pendingLength(Buffer.concat([patterns[4] as Buffer, Buffer.from("q")]))).toBe(0);
    expect(finder.pendingLength(Buffer.from("zzzzaba"))).toBe(3);
    expect(finder.pendingLength(Buffer.alloc(0))).toBe(0);
  });

  it("refuses patterns too short to search for", () => {
    expect(() => new PatternFinder([])).toThrow(/at least 3 bytes/);
    expect(() => new PatternFinder([Buffer.from("ab")])).toThrow(/at least 3 bytes/);
  });
});
