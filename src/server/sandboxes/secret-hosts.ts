import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { isHostOnlyAddress } from "../../sandbox/runner/egress/addresses.js";
import {
  formatHostPattern,
  type HostPattern,
  hostMatches,
  parseHostPattern,
} from "../../sandbox/runner/egress/host-pattern.js";
import { ApiError } from "../http/api-error.js";

/**
 * The host patterns of a secret store's allowlist or of a secret's `hosts`, in their canonical
 * form (lower case, no trailing dot, IPv6 compressed), without duplicates; or a 400 naming the
 * first entry that is not one, as `field[index]`. Stricter than the proxy's reading of a
 * pattern: what is stored is exactly what will be matched, so nothing is trimmed or guessed.
 */
export function hostPatterns(entries: readonly string[], field: string): string[] {
  const canonical = entries.map((entry, index) => {
    const pattern = strictHostPattern(entry);
    if (typeof pattern === "string") {
      throw new ApiError(
        "invalid_request",
        `${field}[${index}] ${JSON.stringify(entry)} ${pattern}`,
      );
    }
    return formatHostPattern(pattern);
  });
  return [...new Set(canonical)];
}

/**
 * Refuses (400, naming `field` and each pattern) host patterns that reach beyond the allowlist:
 * a secret may only be used where its sandbox may go.
 */
export function checkWithinAllowlist(
  hosts: readonly string[],
  allowlist: readonly string[],
  field: string,
): void {
  const outside = hosts.filter((text) => !covered(text, allowlist));
  if (outside.length > 0) {
    throw new ApiError(
      "invalid_request",
      `${field}: ${outside.join(", ")} ${outside.length === 1 ? "is" : "are"} not on the store's allowlist (${allowlist.join(", ")}); a secret can only be used where the sandbox may go`,
    );
  }
}

function strictHostPattern(entry: string): HostPattern | string {
  if (/[\s\p{Cc}]/u.test(entry)) return "has whitespace or a control character in it";
  if (/[\u0080-\uffff]/.test(entry)) {
    const name = entry.replace(/:\d+$/, "").replace(/^\*\./, "");
    const ascii = domainToASCII(name);
    return ascii === ""
      ? "is not a valid host name"
      : `is not ASCII: write the name in its xn-- form (${entry.replace(name, ascii)})`;
  }
  // The port as written, after a bracketed address or a name (a bare IPv6 address is refused
  // below): 443, not 0443.
  const port = /^(?:\[[^\]]*\]|[^:]*):(\d+)$/.exec(entry)?.[1];
  if (port?.startsWith("0") === true) return "has a port outside 1–65535, or with a leading zero";
  const pattern = parseHostPattern(entry);
  if (typeof pattern === "string") return pattern;
  if (isIP(pattern.host) === 6 && pattern.host.includes("%")) {
    return "has an IPv6 zone (%…), which a proxy cannot dial";
  }
  if (isHostOnlyAddress(pattern.host)) {
    return "is this host's own, link-local or cloud metadata address, which no allowlist opens; a service on this host is reached through a name the operator gives it (cairn dev --egress-host name=address:port)";
  }
  if (isIP(pattern.host) === 6) {
    // The compressed form, which is how the proxy sees the address in a request.
    return { ...pattern, host: new URL(`http://[${pattern.host}]`).hostname.slice(1, -1) };
  }
  // A last label that is a number in any notation makes the whole name an IPv4 address to a
  // URL parser (0x7f000001, 0177.1): only the dotted decimal form is a pattern.
  const last = pattern.host.split(".").at(-1) ?? "";
  if (isIP(pattern.host) === 0 && /^(0x[0-9a-f]*|\d+)$/.test(last)) {
    return "looks like an IPv4 address in another notation; write it as four decimal numbers (127.0.0.1)";
  }
  return pattern;
}

// Covered: the same entry, or a name or subdomain pattern inside a wildcard of the allowlist,
// on a port the allowlist allows (without a port, both 80 and 443).
function covered(text: string, allowlist: readonly string[]): boolean {
  if (allowlist.includes(text)) return true;
  const pattern = parseHostPattern(text);
  if (typeof pattern === "string") return false;
  const ports = pattern.port === undefined ? [80, 443] : [pattern.port];
  // A wildcard is covered by a wildcard over the same or a parent name: try its subdomain "x.".
  const sample = pattern.wildcard ? `x.${pattern.host}` : pattern.host;
  const allowed = allowlist
    .map((entry) => parseHostPattern(entry))
    .filter((entry): entry is HostPattern => typeof entry !== "string")
    .filter((entry) => entry.wildcard || !pattern.wildcard);
  return ports.every((port) => allowed.some((entry) => hostMatches(entry, sample, port)));
}
