import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { SandboxEgressPolicy, SandboxSecret } from "./policy.js";
import { hopByHop } from "./substitute.js";

/** A text to find in responses, and what it becomes. */
export interface ScrubPattern {
  readonly find: Buffer;
  readonly replace: Buffer;
}

/**
 * What a secret looks like in a response that echoes it: the value, its JSON-escaped and
 * percent-encoded forms, and its base64 (standard and URL-safe) at each of the three alignments
 * it can have inside longer base64 (`Authorization: Basic` of user:value echoed back). Each
 * becomes the placeholder, or, for the middle of a longer base64 text, a run of `*`.
 */
function patternsOf(secret: SandboxSecret): ScrubPattern[] {
  const value = Buffer.from(secret.value, "utf8");
  const placeholder = Buffer.from(secret.placeholder, "utf8");
  const patterns = new Map<string, Buffer>();
  const add = (find: string, replace: Buffer) => {
    if (find.length >= 8 && !patterns.has(find)) patterns.set(find, replace);
  };
  add(secret.value, placeholder);
  add(JSON.stringify(secret.value).slice(1, -1), placeholder);
  add(encodeURIComponent(secret.value), placeholder);
  add(
    encodeURIComponent(secret.value).replace(/%[0-9A-F]{2}/g, (encoded) => encoded.toLowerCase()),
    placeholder,
  );
  for (const shift of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(shift), value]);
    const encoded = padded.toString("base64");
    // Characters that depend only on the value's bytes: after the shifted ones, before the
    // last group when the value does not end on a group boundary. The value's own base64 is
    // the first of these, and its last group at most is left (a few characters, no secret).
    const start = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const endBytes = padded.length - (padded.length % 3);
    const stable = encoded.slice(start, (endBytes / 3) * 4);
    for (const form of [stable, toUrlSafe(stable)]) {
      if (form.length >= 16) add(form, Buffer.from("*".repeat(form.length)));
    }
  }
  return [...patterns].map(([find, replace]) => ({ find: Buffer.from(find, "utf8"), replace }));
}

function toUrlSafe(base64: string): string {
  return base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The patterns of every secret of a policy, longest first (a whole form before a part of it). */
export function scrubPatterns(policy: SandboxEgressPolicy): ScrubPattern[] {
  return policy.secrets.flatMap(patternsOf).sort((a, b) => b.find.length - a.find.length);
}

/** `bytes` with every pattern replaced. */
export function scrubBytes(bytes: Buffer, patterns: readonly ScrubPattern[]): Buffer {
  let result = bytes;
  for (const { find, replace } of patterns) {
    let at = result.indexOf(find);
    if (at === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at !== -1) {
      parts.push(result.subarray(from, at), replace);
      from = at + find.length;
      at = result.indexOf(find, from);
    }
    parts.push(result.subarray(from));
    result = Buffer.concat(parts);
  }
  return result;
}

/** Response headers with every secret form replaced. */
export function scrubHeaders(
  headers: IncomingHttpHeaders,
  patterns: readonly ScrubPattern[],
): OutgoingHttpHeaders {
  const scrubbed: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || hopByHop.has(name)) continue;
    const scrub = (text: string) =>
      scrubBytes(Buffer.from(text, "latin1"), patterns).toString("latin1");
    scrubbed[name] = Array.isArray(value) ? value.map(scrub) : scrub(value);
  }
  return scrubbed;
}

const empty = Buffer.alloc(0);

/**
 * Replaces every secret form in a body that comes in chunks, also across chunk boundaries: it
 * holds back the last (longest pattern − 1) bytes of what it was given until more comes or the
 * end. A chunk in which no form begins (the common case) goes out as it is, neither copied nor
 * searched twice.
 */
export class Scrubber {
  private held: Buffer = empty;
  private readonly keep: number;

  constructor(private readonly patterns: readonly ScrubPattern[]) {
    this.keep = Math.max(0, ...patterns.map((pattern) => pattern.find.length - 1));
  }

  /** What can go out now, `chunk` taken in: the bytes before it first, in order. */
  write(chunk: Buffer): Buffer[] {
    const keep = this.keep;
    if (chunk.length > keep) {
      // A form that begins in the held bytes ends within `seam`; one that begins in the chunk
      // is found in the chunk. With neither, nothing is replaced: only the chunk's tail waits.
      const seam = Buffer.concat([this.held, chunk.subarray(0, keep)]);
      if (!this.patterns.some(({ find }) => seam.includes(find) || chunk.includes(find))) {
        const out = this.held.length > 0 ? [this.held] : [];
        out.push(chunk.subarray(0, chunk.length - keep));
        this.held = chunk.subarray(chunk.length - keep);
        return out;
      }
    }
    const joined = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    // Whatever a form could still begin in stays held; the rest goes out scrubbed, cut where no
    // form crosses.
    let cut = Math.max(0, joined.length - keep);
    for (let moved = true; moved && cut > 0; ) {
      moved = false;
      for (const { find } of this.patterns) {
        const at = joined.indexOf(find, Math.max(0, cut - find.length + 1));
        if (at !== -1 && at < cut && at + find.length > cut) {
          cut = at;
          moved = true;
        }
      }
    }
    this.held = joined.subarray(cut);
    return cut > 0 ? [scrubBytes(joined.subarray(0, cut), this.patterns)] : [];
  }

  /** The held rest, scrubbed: the body has ended. */
  end(): Buffer {
    const rest = this.held;
    this.held = empty;
    return scrubBytes(rest, this.patterns);
  }
}
