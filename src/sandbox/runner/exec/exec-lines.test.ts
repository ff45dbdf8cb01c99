import { describe, expect, it } from "vitest";
import { type ExecStream, LineSplitter } from "./exec-lines.js";

function split(chunks: Array<[1 | 2, string | Uint8Array]>, maxLineBytes?: number) {
  const lines: Array<[ExecStream, string]> = [];
  const splitter = new LineSplitter((stream, line) => lines.push([stream, line]), maxLineBytes);
  for (const [channel, chunk] of chunks) {
    splitter.write(channel, typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  }
  splitter.end();
  return lines;
}

describe("LineSplitter", () => {
  it("gives each stream's lines apart, however the chunks fall, and the last one at the end", () => {
    expect(
      split([
        [1, '{"a":'],
        [2, "log o"],
        [1, '1}\n{"b":2}\r\n{"c"'],
        [2, "ne\n\n"],
        [1, ":3}"],
      ]),
    ).toEqual([
      ["stdout", '{"a":1}'],
      ["stdout", '{"b":2}'],
      ["stderr", "log one"],
      ["stderr", ""],
      ["stdout", '{"c":3}'],
    ]);
  });

  it("keeps a character whose bytes come in two chunks whole", () => {
    const bytes = Buffer.from("ünï\n");
    expect(
      split([
        [1, bytes.subarray(0, 1)],
        [1, bytes.subarray(1, 4)],
        [1, bytes.subarray(4)],
      ]),
    ).toEqual([["stdout", "ünï"]]);
  });

  it("cuts a line at the longest kept and drops the rest of it, then goes on", () => {
    expect(
      split(
        [
          [1, "abcdefgh"],
          [1, "ijk\nshort\nlonger"],
        ],
        5,
      ),
    ).toEqual([
      ["stdout", "abcde"],
      ["stdout", "short"],
      ["stdout", "longe"],
    ]);
  });

  it("survives a listener that throws", () => {
    const seen: string[] = [];
    const splitter = new LineSplitter((_stream, line) => {
      seen.push(line);
      throw new Error("the caller's bug");
    });
    splitter.write(1, Buffer.from("one\ntwo\n"));
    expect(seen).toEqual(["one", "two"]);
  });
});
