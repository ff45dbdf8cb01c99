import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { Transform, type TransformCallback } from "node:stream";
import { allowedBy } from "./host-pattern.js";
import type { SandboxEgressPolicy, SandboxSecret } from "./policy.js";

/** Any Cairn placeholder, this sandbox's or not. */
const anyPlaceholder = /cairn_sealed_[0-9a-f]{32}/;

/** Headers a proxy consumes or that describe one hop only. */
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** The headers of a request, its placeholders replaced, or the reason it is refused. */
export type Substituted =
  | { readonly headers: OutgoingHttpHeaders; readonly used: readonly string[] }
  | { readonly refused: string };

/**
 * Puts secrets into a request's headers: each placeholder of the sandbox is replaced by its
 * value when the request goes to one of that secret's hosts (also inside `Authorization: Basic`,
 * whose user:password is decoded, replaced and encoded again). A placeholder anywhere else (a
 * host outside the secret's, a placeholder of another sandbox or of a deleted secret) refuses
 * the whole request: nothing is forwarded. Hop-by-hop headers are dropped.
 */
export function substituteHeaders(
  raw: IncomingHttpHeaders,
  policy: SandboxEgressPolicy,
  host: string,
  port: number,
): Substituted {
  const headers: OutgoingHttpHeaders = {};
  const used = new Set<string>();
  const listed = new Set(
    String(raw.connection ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase()),
  );
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || hopByHop.has(name) || listed.has(name)) continue;
    const values = Array.isArray(value) ? value : [value];
    const replaced: string[] = [];
    for (const each of values) {
      const result = replaceIn(each, name, policy, host, port, used);
      if (typeof result !== "string") return result;
      replaced.push(result);
    }
    headers[name] = Array.isArray(value) ? replaced : replaced[0];
  }
  return { headers, used: [...used] };
}

function replaceIn(
  value: string,
  name: string,
  policy: SandboxEgressPolicy,
  host: string,
  port: number,
  used: Set<string>,
): string | { refused: string } {
  let text = value;
  if (name === "authorization" && /^basic\s+/i.test(text)) {
    const [scheme, encoded = ""] = text.split(/\s+/, 2) as [string, string?];
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    if (anyPlaceholder.test(decoded)) {
      const inner = replaceIn(decoded, "", policy, host, port, used);
      if (typeof inner !== "string") return inner;
      text = `${scheme} ${Buffer.from(inner, "utf8").toString("base64")}`;
    }
  }
  for (const secret of policy.secrets) {
    if (!text.includes(secret.placeholder)) continue;
    if (!allowedBy(secret.hosts, host, port)) {
      return {
        refused: `the request to ${host} carries the placeholder of secret ${secret.key}, which may only be sent to ${secret.hosts.join(", ")}`,
      };
    }
    text = text.split(secret.placeholder).join(secret.value);
    used.add(secret.key);
  }
  if (anyPlaceholder.test(text)) {
    return {
      refused: `the request to ${host} carries a placeholder that is not one of this sandbox's secrets`,
    };
  }
  return text;
}

/** Why a URL is refused: it carries a placeholder (secrets go only in headers). */
export function placeholderInUrl(url: string): string | undefined {
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // A malformed escape: look at the URL as it is.
  }
  return anyPlaceholder.test(decoded)
    ? "the URL carries a secret's placeholder; secrets are put only into request headers"
    : undefined;
}

/** A text to find in responses, and what it becomes. */
interface Pattern {
  readonly find: Buffer;
  readonly replace: Buffer;
}

/**
 * What a secret looks like in a response that echoes it: the value, its JSON-escaped and
 * percent-encoded forms, and its base64 (standard and URL-safe) at each of the three alignments
 * it can have inside longer base64 (`Authorization: Basic` of user:value echoed back). Each
 * becomes the placeholder, or, for the middle of a longer base64 text, a run of `*`.
 */
function patternsOf(secret: SandboxSecret): Pattern[] {
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
  // Longest first, so a whole form is replaced before a part of it.
  return [...patterns]
    .map(([find, replace]) => ({ find: Buffer.from(find, "utf8"), replace }))
    .sort((a, b) => b.find.length - a.find.length);
}

function toUrlSafe(base64: string): string {
  return base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The patterns of every secret of a policy. */
export function scrubPatterns(policy: SandboxEgressPolicy): Pattern[] {
  return policy.secrets.flatMap(patternsOf).sort((a, b) => b.find.length - a.find.length);
}

/** `bytes` with every pattern replaced. */
export function scrubBytes(bytes: Buffer, patterns: readonly Pattern[]): Buffer {
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
  patterns: readonly Pattern[],
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

/**
 * A stream that replaces every secret form in what passes through it, also across chunk
 * boundaries: it holds back the last (longest pattern − 1) bytes until more come or the end.
 */
export class Scrubber extends Transform {
  private held = Buffer.alloc(0);
  private readonly keep: number;

  constructor(private readonly patterns: readonly Pattern[]) {
    super();
    this.keep = Math.max(0, ...patterns.map((pattern) => pattern.find.length - 1));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const joined = Buffer.concat([this.held, chunk]);
    // Whatever a match could still start in stays held; the rest goes out scrubbed, cut where
    // no match crosses.
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
    this.held = joined.subarray(cut);
    if (cut > 0) this.push(scrubBytes(joined.subarray(0, cut), this.patterns));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.held.length > 0) this.push(scrubBytes(this.held, this.patterns));
    done();
  }
}
