import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { PatternFinder } from "./pattern-finder.js";
import { type SandboxEgressPolicy, type SandboxSecret, scrubbable } from "./policy.js";
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
 * becomes the placeholder, or, for the middle of a longer base64 text, a run of `*`. A form
 * shorter than the shortest value that can be set is left: it would match ordinary text.
 */
function patternsOf(secret: SandboxSecret): ScrubPattern[] {
  const value = Buffer.from(secret.value, "utf8");
  const placeholder = Buffer.from(secret.placeholder, "utf8");
  const patterns = new Map<string, Buffer>();
  const add = (find: string, replace: Buffer) => {
    if (scrubbable(find) && !patterns.has(find)) patterns.set(find, replace);
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
      add(form, Buffer.from("*".repeat(form.length)));
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
 * Replaces every secret form in a body that comes in chunks, also across chunk boundaries. A
 * chunk in which no form occurs (the common case) goes out as it is, neither copied nor cut,
 * but for its last bytes when they begin a form: those wait for the next chunk or the end. A
 * chunk with a form in it, or in the seam with what waited, is scrubbed: cut where no form
 * crosses, the rest held.
 */
export class Scrubber {
  private held: Buffer = empty;
  private readonly keep: number;
  private readonly finder: PatternFinder;

  constructor(private readonly patterns: readonly ScrubPattern[]) {
    this.finder = new PatternFinder(patterns.map((pattern) => pattern.find));
    this.keep = this.finder.longest - 1;
  }

  /**
   * What can go out now, `chunk` taken in: the bytes before it first, in order. What it returns
   * may be views of `chunk`; it keeps none itself, so `chunk` is the caller's again once those
   * are written.
   */
  write(chunk: Buffer): Buffer[] {
    const { held, finder } = this;
    if (held.length === 0) {
      if (!finder.occursIn(chunk)) return this.passAllBut(finder.pendingLength(chunk), chunk, []);
    } else if (chunk.length > this.keep) {
      // A form that begins in the held bytes ends within the seam; one that begins in the chunk
      // is found in the chunk.
      const seam = Buffer.concat([held, chunk.subarray(0, this.keep)]);
      if (!finder.occursIn(seam) && !finder.occursIn(chunk)) {
        return this.passAllBut(finder.pendingLength(chunk), chunk, [held]);
      }
    }
    return this.scrub(held.length === 0 ? chunk : Buffer.concat([held, chunk]));
  }

  /** The held rest, scrubbed: the body has ended. */
  end(): Buffer {
    const rest = this.held;
    this.held = empty;
    return scrubBytes(rest, this.patterns);
  }

  // `out` and `bytes` but for the last `pending` of them, which are held (a copy).
  private passAllBut(pending: number, bytes: Buffer, out: Buffer[]): Buffer[] {
    const cut = bytes.length - pending;
    if (cut > 0) out.push(pending === 0 ? bytes : bytes.subarray(0, cut));
    this.held = pending === 0 ? empty : Buffer.from(bytes.subarray(cut));
    return out;
  }

  private scrub(joined: Buffer): Buffer[] {
    if (!this.finder.occursIn(joined)) {
      return this.passAllBut(this.finder.pendingLength(joined), joined, []);
    }
    // Whatever a form could still begin in stays held; the rest goes out scrubbed, cut where no
    // form crosses.
    let cut = Math.max(0, joined.length - this.keep);
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
    this.held = Buffer.from(joined.subarray(cut));
    return cut > 0 ? [scrubBytes(joined.subarray(0, cut), this.patterns)] : [];
  }
}
