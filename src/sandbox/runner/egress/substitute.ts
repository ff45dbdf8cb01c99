import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { minSecretValueLength } from "../../../core/wire/secrets.js";
import { allowedBy } from "./host-pattern.js";
import { type SandboxEgressPolicy, scrubbable } from "./policy.js";

/** Any Cairn placeholder, this sandbox's or not. */
const anyPlaceholder = /cairn_sealed_[0-9a-f]{32}/;

/** Headers a proxy consumes or that describe one hop only. */
export const hopByHop = new Set([
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
    if (!scrubbable(secret.value)) {
      return {
        refused: `the request to ${host} carries the placeholder of secret ${secret.key}, whose value is shorter than ${minSecretValueLength} characters: too short to keep out of the answer, so it is not sent; set the secret again with its full value (cairn secrets set)`,
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
