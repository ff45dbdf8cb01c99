import { describe, expect, it } from "vitest";
import { concatBytes, seededRandom as random, sameBytes } from "../../../../test/helpers/bytes.js";
import { OutputBudget, OutputBuffer, type OutputChunk } from "./output-buffer.js";

const bytesOf = (text: string) => new TextEncoder().encode(text);

function concat(chunks: readonly OutputChunk[]): Uint8Array {
  return concatBytes(chunks.map((chunk) => chunk.bytes));
}

function text(chunks: readonly OutputChunk[]): string {
  return new TextDecoder().decode(concat(chunks));
}

describe("OutputBuffer", () => {
  it("reads every offset across chunk boundaries", () => {
    const buffer = new OutputBuffer(1024);
    buffer.append(1, bytesOf("abc"));
    buffer.append(2, bytesOf("de"));
    buffer.append(1, bytesOf("fghi"));
    const all = "abcdefghi";
    for (let since = 0; since <= all.length; since++) {
      const read = buffer.read(since);
      expect(read.dropped).toBe(0);
      expect(text(read.chunks)).toBe(all.slice(since));
      expect(read.chunks[0]?.offset ?? buffer.end).toBe(since);
    }
    expect(buffer.read(4).chunks).toEqual([
      { channel: 2, bytes: bytesOf("e"), offset: 4 },
      { channel: 1, bytes: bytesOf("fghi"), offset: 5 },
    ]);
  });

  it("hands out copies: what a reader keeps does not change as the ring wraps", () => {
    const buffer = new OutputBuffer(4);
    buffer.append(1, bytesOf("abcd"));
    const [first] = buffer.read(0).chunks;
    buffer.append(1, bytesOf("wxyz"));
    expect(first?.bytes).toEqual(bytesOf("abcd"));
  });

  it("drops the oldest bytes over capacity and counts what since asked for", () => {
    const buffer = new OutputBuffer(6);
    buffer.append(1, bytesOf("abc"));
    buffer.append(1, bytesOf("def"));
    buffer.append(2, bytesOf("gh"));
    expect(buffer.start).toBe(2);
    expect(buffer.end).toBe(8);
    expect(buffer.read(0)).toEqual({
      dropped: 2,
      chunks: [
        { channel: 1, bytes: bytesOf("cdef"), offset: 2 },
        { channel: 2, bytes: bytesOf("gh"), offset: 6 },
      ],
    });
    expect(buffer.read(1).dropped).toBe(1);
    expect(buffer.read(3).dropped).toBe(0);
    expect(text(buffer.read(5).chunks)).toBe("fgh");
    expect(buffer.read(8)).toEqual({ dropped: 0, chunks: [] });
  });

  it("reads at most maxBytes at a time", () => {
    const buffer = new OutputBuffer(64);
    buffer.append(1, bytesOf("abc"));
    buffer.append(2, bytesOf("defgh"));
    expect(buffer.read(1, 4).chunks).toEqual([
      { channel: 1, bytes: bytesOf("bc"), offset: 1 },
      { channel: 2, bytes: bytesOf("de"), offset: 3 },
    ]);
  });

  it("keeps only the tail of a single chunk larger than the capacity", () => {
    const buffer = new OutputBuffer(4);
    buffer.append(1, bytesOf("ab"));
    buffer.append(2, bytesOf("0123456789"));
    expect(buffer.start).toBe(8);
    expect(buffer.end).toBe(12);
    expect(buffer.read(0)).toEqual({
      dropped: 8,
      chunks: [{ channel: 2, bytes: bytesOf("6789"), offset: 8 }],
    });
    expect(text(buffer.read(10).chunks)).toBe("89");
    buffer.append(1, bytesOf("x"));
    expect(buffer.start).toBe(9);
    expect(buffer.read(9).chunks).toEqual([
      { channel: 2, bytes: bytesOf("789"), offset: 9 },
      { channel: 1, bytes: bytesOf("x"), offset: 12 },
    ]);
  });

  it("keeps stdout and stderr interleaved in the order they came, one chunk per run", () => {
    const buffer = new OutputBuffer(1024);
    const appended: Array<[1 | 2, string]> = [
      [1, "out1 "],
      [2, "err1 "],
      [2, "err2 "],
      [1, "out2 "],
      [2, "err3"],
    ];
    for (const [channel, piece] of appended) buffer.append(channel, bytesOf(piece));
    const chunks = buffer.read(0).chunks;
    expect(chunks.map((chunk) => [chunk.channel, new TextDecoder().decode(chunk.bytes)])).toEqual([
      [1, "out1 "],
      [2, "err1 err2 "],
      [1, "out2 "],
      [2, "err3"],
    ]);
  });

  it("tells subscribers about new output until they unsubscribe", () => {
    const buffer = new OutputBuffer(4);
    buffer.append(1, bytesOf("old"));
    const ends: number[] = [];
    const unsubscribe = buffer.subscribe(() => ends.push(buffer.end));
    buffer.append(2, bytesOf("new"));
    buffer.append(1, bytesOf("longer than four"));
    unsubscribe();
    buffer.append(1, bytesOf("after"));
    expect(ends).toEqual([6, 22]);
  });

  it("ignores empty writes", () => {
    const buffer = new OutputBuffer(4);
    let calls = 0;
    buffer.subscribe(() => calls++);
    buffer.append(1, new Uint8Array());
    expect(buffer.end).toBe(0);
    expect(calls).toBe(0);
  });

  it("takes 1.125 bytes of memory per byte held, one byte per write or many", () => {
    const capacity = 1024 * 1024;
    const buffer = new OutputBuffer(capacity);
    const one = new Uint8Array(1);
    for (let index = 0; index < 3 * capacity; index++) buffer.append(index % 3 === 0 ? 2 : 1, one);
    expect(buffer.allocatedBytes).toBe(capacity + capacity / 8);
    expect(buffer.end - buffer.start).toBe(capacity);
    const runs = buffer.read(buffer.start).chunks;
    expect(runs.every((chunk) => chunk.bytes.byteLength <= 2)).toBe(true);
  });

  it("grows only as far as the runner's budget allows, and gives the memory back", () => {
    const budget = new OutputBudget(300 * 1024);
    const first = new OutputBuffer(4 * 1024 * 1024, budget);
    const second = new OutputBuffer(4 * 1024 * 1024, budget);
    const megabyte = new Uint8Array(1024 * 1024).fill(7);
    first.append(1, megabyte);
    second.append(1, megabyte);
    expect(budget.usedBytes).toBeLessThanOrEqual(300 * 1024);
    // Each holds what its ring holds: the tail of what was written, offsets intact.
    expect(first.end).toBe(1024 * 1024);
    expect(first.start).toBe(1024 * 1024 - (first.end - first.start));
    expect(first.end - first.start).toBeGreaterThanOrEqual(64 * 1024);
    expect(text(second.read(second.end - 3).chunks)).toBe("\u0007\u0007\u0007");
    first.release();
    second.release();
    expect(budget.usedBytes).toBe(0);
  });

  it("rejects a since past the end or not a whole number, and a bad capacity", () => {
    const buffer = new OutputBuffer(8);
    buffer.append(1, bytesOf("abc"));
    expect(() => buffer.read(4)).toThrow(
      new RangeError("since 4 is past the end of the output: only 3 bytes were written"),
    );
    expect(() => buffer.read(-1)).toThrow(RangeError);
    expect(() => buffer.read(1.5)).toThrow(RangeError);
    expect(() => new OutputBuffer(0)).toThrow(RangeError);
  });

  it("reads the tail of everything appended, for random chunk sizes and capacities", () => {
    const next = random(42);
    for (let round = 0; round < 200; round++) {
      const capacity = 1 + Math.floor(next() * 200);
      const buffer = new OutputBuffer(capacity);
      const everything: number[] = [];
      const appends = Math.floor(next() * 40);
      for (let index = 0; index < appends; index++) {
        const size = Math.floor(next() * (next() < 0.1 ? 400 : 40));
        const bytes = Uint8Array.from({ length: size }, () => Math.floor(next() * 256));
        buffer.append(next() < 0.5 ? 1 : 2, bytes);
        everything.push(...bytes);
      }
      expect(buffer.end).toBe(everything.length);
      expect(buffer.end - buffer.start).toBeLessThanOrEqual(capacity);
      for (let since = 0; since <= buffer.end; since++) {
        const read = buffer.read(since);
        const from = Math.max(since, buffer.start);
        let offset = from;
        let offsetsFollow = true;
        for (const chunk of read.chunks) {
          offsetsFollow &&= chunk.offset === offset;
          offset += chunk.bytes.byteLength;
        }
        const tail = Uint8Array.from(everything.slice(from));
        if (
          read.dropped !== from - since ||
          !offsetsFollow ||
          !sameBytes(concat(read.chunks), tail)
        ) {
          expect({ since, read }).toEqual({ since, expected: { dropped: from - since, tail } });
        }
      }
    }
  });

  it("holds the last 4 MiB of 1 GiB appended in 64 KiB chunks as one run", () => {
    const buffer = new OutputBuffer(4 * 1024 * 1024);
    const chunk = new Uint8Array(64 * 1024);
    for (let index = 0; index < 16 * 1024; index++) buffer.append(1, chunk);
    expect(buffer.end).toBe(1024 * 1024 * 1024);
    expect(buffer.start).toBe(buffer.end - 4 * 1024 * 1024);
    expect(buffer.read(buffer.start).chunks).toHaveLength(1);
  });
});
