import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../test/helpers/bytes.js";
import type { SandboxEgressPolicy } from "./policy.js";
import { Scrubber, scrubBytes, scrubPatterns } from "./scrub.js";

// Two secrets: one whose JSON, percent and base64 forms all differ from it, and one that repeats
// itself, so that its occurrences overlap one another.
const policy: SandboxEgressPolicy = {
  store: "prod",
  allowlist: ["api.example.com"],
  secrets: [
    {
      key: "API_KEY",
      placeholder: `cairn_sealed_${"a".repeat(32)}`,
      value: 's3cr3t/"value"+with=chars&más',
      hosts: ["api.example.com"],
    },
    {
      key: "TOKEN",
      placeholder: `cairn_sealed_${"b".repeat(32)}`,
      value: "xyxyxyxyxyxyxyxy",
      hosts: ["api.example.com"],
    },
  ],
};
const patterns = scrubPatterns(policy);
const forms = patterns.map((pattern) => pattern.find);

// A seeded generator of whole numbers below 2^31, so that a failure repeats.
function generator(seed: number): () => number {
  const next = seededRandom(seed);
  return () => Math.floor(next() * 2 ** 31);
}

function randomBytes(next: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => next() & 0xff));
}

/** The body scrubbed chunk by chunk, cut before each index of `cuts`. */
function scrubInChunks(body: Buffer, cuts: readonly number[]): Buffer {
  const scrubber = new Scrubber(patterns);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    // A copy of each chunk, overwritten once written: the scrubber may keep nothing of it.
    const chunk = Buffer.from(body.subarray(from, cut));
    for (const part of scrubber.write(chunk)) out.push(Buffer.from(part));
    chunk.fill(0x21);
    from = cut;
  }
  out.push(scrubber.end());
  return Buffer.concat(out);
}

function expectNoForm(bytes: Buffer): void {
  for (const form of forms) expect(bytes.includes(form), form.toString("latin1")).toBe(false);
}

describe("Scrubber", () => {
  it("scrubs a body cut at any one byte, or any two, as it scrubs it whole", () => {
    const next = generator(1);
    // Binary bytes 0x00-0xff around forms, with forms at the very start and the very end.
    const body = Buffer.concat([
      forms[0] as Buffer,
      randomBytes(next, 9),
      forms[forms.length - 1] as Buffer,
      randomBytes(next, 5),
      forms[3] as Buffer,
      forms[1] as Buffer,
      randomBytes(next, 3),
      forms[0] as Buffer,
    ]);
    const whole = scrubBytes(body, patterns);
    expectNoForm(whole);
    for (let cut = 0; cut <= body.length; cut++) {
      expect(scrubInChunks(body, [cut]).equals(whole), `cut at ${cut}`).toBe(true);
    }
    for (let first = 0; first <= body.length; first += 3) {
      for (let second = first; second <= body.length; second++) {
        expect(scrubInChunks(body, [first, second]).equals(whole), `${first}, ${second}`).toBe(
          true,
        );
      }
    }
  });

  it("scrubs forms that begin or end exactly where a chunk does, one byte at a time too", () => {
    const before = Buffer.from("before ");
    const after = Buffer.from(" after");
    for (const form of forms) {
      const body = Buffer.concat([before, form, after]);
      const whole = scrubBytes(body, patterns);
      expectNoForm(whole);
      const starts = before.length;
      const ends = before.length + form.length;
      for (const cuts of [[starts], [ends], [starts, ends], [starts + 1, ends - 1]]) {
        expect(scrubInChunks(body, cuts).equals(whole)).toBe(true);
      }
      const everyByte = Array.from({ length: body.length }, (_, index) => index + 1);
      expect(scrubInChunks(body, everyByte).equals(whole)).toBe(true);
    }
  });

  it("scrubs overlapping occurrences of a form that repeats itself", () => {
    const token = policy.secrets[1]?.value as string;
    const body = Buffer.from(`[${"xy".repeat(23)}x] [${token}${token.slice(0, 7)}]`);
    const whole = scrubBytes(body, patterns);
    expectNoForm(whole);
    for (let cut = 0; cut <= body.length; cut++) {
      expect(scrubInChunks(body, [cut]).equals(whole), `cut at ${cut}`).toBe(true);
    }
  });

  it("leaves nothing of any form in random bodies of forms, their pieces and bytes 0x00-0xff", () => {
    const next = generator(7);
    for (let round = 0; round < 200; round++) {
      const pieces: Buffer[] = [];
      while (pieces.length < 12) {
        const form = forms[next() % forms.length] as Buffer;
        const kind = next() % 4;
        if (kind === 0) pieces.push(form);
        else if (kind === 1) pieces.push(form.subarray(0, next() % form.length));
        else if (kind === 2) pieces.push(form.subarray(next() % form.length));
        else pieces.push(randomBytes(next, next() % 8));
      }
      const body = Buffer.concat(pieces);
      const whole = scrubBytes(body, patterns);
      expectNoForm(whole);
      const cuts: number[] = [];
      for (let at = next() % 40; at < body.length; at += 1 + (next() % 40)) cuts.push(at);
      expect(scrubInChunks(body, cuts).equals(whole), `round ${round}`).toBe(true);
    }
  });

  it("scrubs long binary bodies cut into long chunks as it scrubs them whole", () => {
    // Chunks of 16 KiB and more are searched with the shift table, shorter ones natively.
    const next = generator(11);
    const pieces: Buffer[] = [];
    while (pieces.length < 60)
      pieces.push(randomBytes(next, next() % 9000), forms[next() % forms.length] as Buffer);
    const body = Buffer.concat(pieces);
    const whole = scrubBytes(body, patterns);
    expectNoForm(whole);
    for (const size of [16 * 1024, 16 * 1024 + 7, 65_536, 100_003]) {
      const cuts: number[] = [];
      for (let at = size; at < body.length; at += size) cuts.push(at);
      expect(scrubInChunks(body, cuts).equals(whole), `chunks of ${size}`).toBe(true);
    }
  });

  it("passes a chunk without a form on as it is, with none of its bytes held", () => {
    const scrubber = new Scrubber(patterns);
    const chunk = Buffer.alloc(64 * 1024, "abcdefghijklmnopqrstuvwxyz0123456789\n");
    const parts = scrubber.write(chunk);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toBe(chunk);
    expect(scrubber.end()).toHaveLength(0);
  });
});
