/**
 * Turns arbitrary values (function arguments, return values, stream chunks) into the text that
 * goes into `input.value` / `output.value`. It never throws, never loops on cycles, bounds its
 * own work by the size cap, and hides values stored under secret-looking keys.
 */

export interface SerializeOptions {
  /** Cap on the length of the text, in characters; longer text ends with a truncation marker. */
  readonly maxLength: number;
  /** Decides whether the value under a key is a secret. */
  readonly isSecretKey: (key: string) => boolean;
}

export interface Serialized {
  readonly text: string;
  readonly mimeType: "text/plain" | "application/json";
  readonly truncated: boolean;
}

export const redactedMarker = "[REDACTED]";
const maxDepth = 24;

const secretKeys = new Set([
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "xapikey",
  "auth",
  "authorization",
  "proxyauthorization",
  "cookie",
  "setcookie",
  "credential",
  "credentials",
  "privatekey",
  "accesskey",
  "secretkey",
  "signature",
]);
const secretSuffixes = ["password", "secret", "token", "apikey", "privatekey", "accesskey"];

/**
 * The default secret-key rule: the key, lower-cased without separators, is a known secret name
 * or ends like one (`client_secret`, `X-API-Key`, `githubToken`). Counts such as `max_tokens`
 * or `total_tokens` are not secrets and stay visible.
 */
export function createSecretKeyRule(extraKeys: readonly string[] = []): (key: string) => boolean {
  const normalise = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, "");
  const extra = new Set(extraKeys.map(normalise));
  const cache = new Map<string, boolean>();
  return (key) => {
    let secret = cache.get(key);
    if (secret === undefined) {
      const name = normalise(key);
      secret =
        secretKeys.has(name) || extra.has(name) || secretSuffixes.some((s) => name.endsWith(s));
      if (cache.size < 4096) cache.set(key, secret);
    }
    return secret;
  };
}

/** Serialises `value`; undefined when there is nothing to record. */
export function serialize(value: unknown, options: SerializeOptions): Serialized | undefined {
  try {
    if (value === undefined) return undefined;
    if (typeof value === "string") return capText(value, "text/plain", options.maxLength, false);
    const walker = new Walker(options);
    const tree = walker.walk(value, 0);
    const text = JSON.stringify(tree) ?? "null";
    return capText(text, "application/json", options.maxLength, walker.truncated);
  } catch (error) {
    return {
      text: `[unserializable: ${error instanceof Error ? error.message : String(error)}]`,
      mimeType: "text/plain",
      truncated: false,
    };
  }
}

function capText(
  text: string,
  mimeType: Serialized["mimeType"],
  maxLength: number,
  truncated: boolean,
): Serialized {
  if (text.length <= maxLength) return { text, mimeType, truncated };
  const dropped = text.length - maxLength;
  return {
    // Cut JSON is no longer JSON; say so by switching to plain text.
    text: `${text.slice(0, maxLength)}…[truncated ${dropped} characters]`,
    mimeType: "text/plain",
    truncated: true,
  };
}

/** Builds a JSON-safe copy of a value, spending a character budget as it goes. */
class Walker {
  truncated = false;
  private budget: number;
  private readonly path: object[] = [];

  constructor(private readonly options: SerializeOptions) {
    // A little over the cap, so the final cut lands on real content, not on an early stop.
    this.budget = options.maxLength + 64;
  }

  walk(value: unknown, depth: number): unknown {
    switch (typeof value) {
      case "string":
        this.budget -= value.length + 2;
        return value;
      case "number":
        this.budget -= 8;
        return Number.isFinite(value) ? value : String(value);
      case "boolean":
        this.budget -= 5;
        return value;
      case "bigint":
        this.budget -= 8;
        return `${value}n`;
      case "symbol":
        return value.toString();
      case "function":
        return `[Function ${value.name || "anonymous"}]`;
      case "undefined":
        return undefined;
      default:
        return value === null ? null : this.walkObject(value as object, depth);
    }
  }

  private walkObject(value: object, depth: number): unknown {
    if (this.path.includes(value)) return "[Circular]";
    const special = describeSpecial(value);
    if (special !== undefined) return special;
    if (depth >= maxDepth) return Array.isArray(value) ? `[Array(${value.length})]` : "[Object]";
    this.path.push(value);
    try {
      if (Array.isArray(value)) return this.walkEntries(value.entries(), depth, true);
      if (value instanceof Set) return this.walkEntries(value.entries(), depth, true);
      if (value instanceof Map) return this.walkEntries(value.entries(), depth, false);
      if (value instanceof Error) return this.walkError(value, depth);
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
        return this.walk((value as { toJSON: () => unknown }).toJSON(), depth + 1);
      }
      return this.walkEntries(ownEntries(value), depth, false);
    } finally {
      this.path.pop();
    }
  }

  private walkEntries(
    entries: Iterable<[unknown, unknown]>,
    depth: number,
    asArray: boolean,
  ): unknown {
    const array: unknown[] = [];
    const record: Record<string, unknown> = {};
    let skipped = 0;
    for (const [key, item] of entries) {
      if (this.budget <= 0) {
        skipped++;
        continue;
      }
      if (asArray) {
        array.push(this.walk(item, depth + 1) ?? null);
        continue;
      }
      const name = typeof key === "string" ? key : String(key);
      this.budget -= name.length + 4;
      record[name] = this.options.isSecretKey(name) ? redactedMarker : this.walk(item, depth + 1);
    }
    if (skipped > 0) {
      this.truncated = true;
      const marker = `[truncated ${skipped} more ${skipped === 1 ? "entry" : "entries"}]`;
      if (asArray) array.push(marker);
      else record["…"] = marker;
    }
    return asArray ? array : record;
  }

  private walkError(error: Error, depth: number): unknown {
    const record: Record<string, unknown> = { name: error.name, message: error.message };
    if (error.stack !== undefined) record.stack = error.stack;
    for (const [key, item] of ownEntries(error)) {
      record[key] = this.options.isSecretKey(key) ? redactedMarker : this.walk(item, depth + 1);
    }
    if (error.cause !== undefined) record.cause = this.walk(error.cause, depth + 1);
    this.budget -= error.message.length + (error.stack?.length ?? 0);
    return record;
  }
}

function ownEntries(value: object): Array<[string, unknown]> {
  const entries: Array<[string, unknown]> = [];
  for (const key of Object.keys(value)) {
    try {
      entries.push([key, (value as Record<string, unknown>)[key]]);
    } catch (error) {
      // A throwing getter must not take the traced call down with it.
      entries.push([key, `[unreadable: ${error instanceof Error ? error.message : "error"}]`]);
    }
  }
  return entries;
}

/** Short descriptions for values whose contents are not worth (or not safe) copying. */
function describeSpecial(value: object): string | undefined {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
  }
  if (value instanceof ArrayBuffer) return `[binary ${value.byteLength} bytes]`;
  if (ArrayBuffer.isView(value)) return `[binary ${value.byteLength} bytes]`;
  if (typeof Blob !== "undefined" && value instanceof Blob) {
    return `[blob ${value.size} bytes${value.type ? ` ${value.type}` : ""}]`;
  }
  if (value instanceof Promise) return "[Promise]";
  if (value instanceof WeakMap) return "[WeakMap]";
  if (value instanceof WeakSet) return "[WeakSet]";
  if (value instanceof RegExp) return value.toString();
  if (typeof ReadableStream !== "undefined" && value instanceof ReadableStream) {
    return "[ReadableStream]";
  }
  return undefined;
}
