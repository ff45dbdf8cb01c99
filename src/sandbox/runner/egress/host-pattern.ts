import { isIP } from "node:net";

/** An allowlist entry: a host name or address, or all subdomains of a name, on a port or two. */
export interface HostPattern {
  /** Lower-cased, without a trailing dot; an IPv6 address without brackets. */
  readonly host: string;
  /** `*.example.com`: the subdomains of `host`, at any depth, and not `host` itself. */
  readonly wildcard: boolean;
  /** The port; undefined for the web's two, 80 and 443. */
  readonly port: number | undefined;
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Reads an allowlist entry: `api.example.com`, `*.example.com` (subdomains only), an IPv4
 * address, or an IPv6 address in brackets, each optionally with `:port`. Returns the reason when
 * it is not one: no schemes, paths, user info, wildcards elsewhere than the whole first label,
 * or wildcards over a top-level domain.
 */
export function parseHostPattern(text: string): HostPattern | string {
  const entry = text.trim().toLowerCase();
  if (entry === "" || entry.length > 300) return "must be a host name, optionally with :port";
  if (/[/@?#\s\\]/.test(entry) || entry.includes("://")) {
    return "must be a host name alone, without a scheme, path or user";
  }
  let hostPart = entry;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed !== null) {
    hostPart = bracketed[1] as string;
    if (isIP(hostPart) !== 6) return "has brackets around something that is not an IPv6 address";
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else {
    const colon = entry.lastIndexOf(":");
    if (colon !== -1) {
      if (entry.indexOf(":") !== colon) return "an IPv6 address must be in brackets: [::1]:443";
      hostPart = entry.slice(0, colon);
      const portText = entry.slice(colon + 1);
      if (!/^\d{1,5}$/.test(portText)) return "has a port that is not a number";
      port = Number(portText);
    }
  }
  if (port !== undefined && (port < 1 || port > 65_535)) return "has a port outside 1–65535";
  if (bracketed !== null) return { host: hostPart, wildcard: false, port };
  hostPart = hostPart.replace(/\.$/, "");
  const wildcard = hostPart.startsWith("*.");
  const name = wildcard ? hostPart.slice(2) : hostPart;
  if (name.includes("*")) return "may have a wildcard only as its whole first label: *.example.com";
  if (isIP(name) === 4) {
    if (wildcard) return "cannot put a wildcard over an IP address";
    return { host: name, wildcard: false, port };
  }
  const labels = name.split(".");
  if (name.length > 253 || !labels.every((part) => label.test(part))) {
    return "is not a valid host name (letters, digits and hyphens in dot-separated labels)";
  }
  if (/^\d+$/.test(labels[labels.length - 1] as string)) {
    return "is neither a host name nor a dotted IPv4 address";
  }
  if (wildcard && labels.length < 2) return "cannot put a wildcard over a top-level domain";
  return { host: name, wildcard, port };
}

/** The canonical text of a pattern: what the API stores and shows. */
export function formatHostPattern(pattern: HostPattern): string {
  const host = isIP(pattern.host) === 6 ? `[${pattern.host}]` : pattern.host;
  return `${pattern.wildcard ? "*." : ""}${host}${pattern.port === undefined ? "" : `:${pattern.port}`}`;
}

/**
 * The host of a request as patterns are matched against it: lower-cased and without a trailing
 * dot (so `API.example.com.` is `api.example.com`, and no other spelling passes for it).
 */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  const unbracketed = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
  return unbracketed.replace(/\.$/, "");
}

/**
 * Whether `pattern` allows `host` (normalized) on `port`: equal names, or for a wildcard a name
 * that ends with `.` and the pattern's name. Nothing else: no suffixes, substrings or regexps.
 */
export function hostMatches(pattern: HostPattern, host: string, port: number): boolean {
  const portAllowed =
    pattern.port === undefined ? port === 80 || port === 443 : port === pattern.port;
  if (!portAllowed) return false;
  if (!pattern.wildcard) return host === pattern.host;
  return host.length > pattern.host.length + 1 && host.endsWith(`.${pattern.host}`);
}

/** Whether a normalized host is a host name of valid labels or an IP address. */
export function isValidHost(host: string): boolean {
  if (isIP(host) !== 0) return true;
  const labels = host.split(".");
  return host.length <= 253 && labels.every((part) => label.test(part));
}

/**
 * Whether any of `patterns` (allowlist entries as stored) allows `host` on `port`. A host that
 * is not a valid name or address is allowed by nothing.
 */
export function allowedBy(patterns: readonly string[], host: string, port: number): boolean {
  const normalized = normalizeHost(host);
  if (!isValidHost(normalized)) return false;
  return patterns.some((text) => {
    const pattern = parseHostPattern(text);
    return typeof pattern !== "string" && hostMatches(pattern, normalized, port);
  });
}
