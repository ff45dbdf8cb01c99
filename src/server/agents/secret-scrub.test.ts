import { describe, expect, it } from "vitest";
import { scrubPatterns } from "../../sandbox/runner/egress/scrub.js";
import { SecretScrub } from "./secret-scrub.js";

const value = "sk-live-9f8e7d6c5b4a39281706f5e4";
const placeholder = "cairn_sealed_0123456789abcdef0123456789abcdef";
const scrub = new SecretScrub(
  scrubPatterns({
    store: "models",
    allowlist: ["api.example.com"],
    secrets: [{ key: "MODEL_KEY", placeholder, value, hosts: ["api.example.com"] }],
  }),
);

/** A text streamed through one block's scrubber, cut at `cuts`. */
function streamed(text: string, cuts: number[]): string {
  const stream = scrub.stream();
  let out = "";
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    out += stream.write(text.slice(from, cut));
    from = cut;
  }
  return out + stream.end();
}

describe("SecretScrub", () => {
  it("keeps a value out of streamed text however the deltas cut it", () => {
    const text = `Your key is ${value}, and again ${value}. Ünïcödé ✓ after it.`;
    const expected = text.replaceAll(value, placeholder);
    for (let first = 0; first <= text.length; first++) {
      expect(streamed(text, [first])).toBe(expected);
      for (let second = first; second <= Math.min(text.length, first + 7); second++) {
        expect(streamed(text, [first, second])).toBe(expected);
      }
    }
    // One character at a time, as a model may stream it.
    expect(
      streamed(
        text,
        [...text].map((_, index) => index),
      ),
    ).toBe(expected);
  });

  it("holds back only what could begin a value, and lets the rest through at once", () => {
    const stream = scrub.stream();
    expect(stream.write("Plain words go out as they come. ")).toBe(
      "Plain words go out as they come. ",
    );
    expect(stream.write("sk-li")).toBe("");
    expect(stream.write("ght of day")).toBe("sk-light of day");
    expect(stream.end()).toBe("");
  });

  it("scrubs a value in JSON values, in its encoded forms too", () => {
    const scrubbed = scrub.value({
      command: `echo '${value}'`,
      nested: [{ header: `Bearer ${value}` }],
      url: `https://x.test/?key=${encodeURIComponent(`${value}/`)}`,
      base64: Buffer.from(value).toString("base64"),
    });
    expect(JSON.stringify(scrubbed)).not.toContain(value);
    expect(JSON.stringify(scrubbed)).not.toContain(Buffer.from(value).toString("base64"));
    expect(scrubbed.command).toBe(`echo '${placeholder}'`);
    expect(scrubbed.nested[0]?.header).toBe(`Bearer ${placeholder}`);
  });

  it("passes everything through untouched without secrets", () => {
    const none = new SecretScrub([]);
    const input = { text: value };
    expect(none.value(input)).toBe(input);
    expect(none.text(value)).toBe(value);
    const stream = none.stream();
    expect(stream.write(value)).toBe(value);
    expect(stream.end()).toBe("");
  });
});
