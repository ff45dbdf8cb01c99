import { describe, expect, it } from "vitest";
import { concatBytes, seededRandom as random, sameBytes } from "../../../../test/helpers/bytes.js";
import { OutputBuffer, type OutputChunk } from "./output-buffer.js";

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

  it("keeps chunks by reference", () => {
    const buffer = new OutputBuffer(1024);
    const chunk = bytesOf("hello");
    buffer.append(1, chunk);
    expect(buffer.read(0).chunks[0]?.bytes).toBe(chunk);
  });

  it("drops whole oldest chunks over capacity and counts what since asked for", () => {
    const buffer = new OutputBuffer(6);
    buffer.append(1, bytesOf("abc"));
    buffer.append(1, bytesOf("def"));
    buffer.append(2, bytesOf("gh"));
    expect(buffer.start).toBe(3);
    expect(buffer.end).toBe(8);
    expect(buffer.read(0)).toEqual({
      dropped: 3,
      chunks: [
        { channel: 1, bytes: bytesOf("def"), offset: 3 },
        { channel: 2, bytes: bytesOf("gh"), offset: 6 },
      ],
    });
    expect(buffer.read(1).dropped).toBe(2);
    expect(buffer.read(3).dropped).toBe(0);
    expect(text(buffer.read(5).chunks)).toBe("fgh");
    expect(buffer.read(8)).toEqual({ dropped: 0, chunks: [] });
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
    expect(buffer.start).toBe(12);
    expect(text(buffer.read(12).chunks)).toBe("x");
  });

  it("keeps stdout and stderr interleaved in the order they came", () => {
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
    expect(chunks.map((chunk) => [chunk.channel, new TextDecoder().decode(chunk.bytes)])).toEqual(
      appended,
    );
  });

  it("tells subscribers about new chunks until they unsubscribe", () => {
    const buffer = new OutputBuffer(4);
    buffer.append(1, bytesOf("old"));
    const seen: OutputChunk[] = [];
    const unsubscribe = buffer.subscribe((chunk) => seen.push(chunk));
    buffer.append(2, bytesOf("new"));
    buffer.append(1, bytesOf("longer than four"));
    unsubscribe();
    buffer.append(1, bytesOf("after"));
    expect(seen.map((chunk) => [chunk.channel, chunk.offset, text([chunk])])).toEqual([
      [2, 3, "new"],
      [1, 6, "longer than four"],
    ]);
  });

  it("ignores empty chunks", () => {
    const buffer = new OutputBuffer(4);
    const seen: OutputChunk[] = [];
    buffer.subscribe((chunk) => seen.push(chunk));
    buffer.append(1, new Uint8Array());
    expect(buffer.end).toBe(0);
    expect(seen).toEqual([]);
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

  it("appends 1 GiB in 64 KiB chunks quickly", () => {
    const buffer = new OutputBuffer(4 * 1024 * 1024);
    const chunk = new Uint8Array(64 * 1024);
    const started = performance.now();
    for (let index = 0; index < 16 * 1024; index++) buffer.append(1, chunk);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(buffer.end).toBe(1024 * 1024 * 1024);
    expect(buffer.start).toBe(buffer.end - 4 * 1024 * 1024);
    expect(buffer.read(buffer.start).chunks).toHaveLength(64);
  });
});
