// The contract between the secret vault (which knows stores, secrets and placeholders) and the
// egress proxy (which enforces them). The proxy asks for the policy on every request, so a
// deleted secret, a changed allowlist or a stopped sandbox takes effect at once.

import { minSecretValueLength } from "../../../core/wire/secrets.js";

/** A secret as the proxy may use it for one sandbox. The plaintext never leaves the host. */
export interface SandboxSecret {
  /** The secret's key in its store (`OPENAI_API_KEY`); the sandbox sees `CAIRN_SECRET_<key>`. */
  readonly key: string;
  /**
   * What the sandbox holds instead of the value: `cairn_sealed_<random>`, bound to this
   * sandbox and this secret (the same string means nothing in another sandbox, or once the
   * secret is deleted).
   */
  readonly placeholder: string;
  /** The plaintext, on the host only. */
  readonly value: string;
  /** Host patterns where the proxy may substitute it (default: the store's allowlist). */
  readonly hosts: readonly string[];
}

/** What one sandbox may reach, and with which secrets. */
export interface SandboxEgressPolicy {
  /** The secret store the sandbox was created with. */
  readonly store: string;
  /**
   * Host patterns: `api.example.com`, `*.example.com` (subdomains only, not the apex),
   * optionally with `:port`. Matched exactly on the lower-cased name without a trailing dot.
   */
  readonly allowlist: readonly string[];
  readonly secrets: readonly SandboxSecret[];
}

/**
 * The policy of a running sandbox; undefined when it has no secret store (every proxied
 * request then gets 407) or is not running. Read again for every request, and waited for: the
 * stores may be in a database that several instances share.
 */
export type EgressPolicySource = (
  sandboxId: string,
) => SandboxEgressPolicy | undefined | Promise<SandboxEgressPolicy | undefined>;

/**
 * The variables a sandbox's processes get for its secrets: `CAIRN_SECRET_<KEY>=<placeholder>`.
 * Takes a policy, or only the keys and placeholders (the vault gives those without opening any
 * value, so that an exec never waits on, nor fails with, decryption).
 */
export function secretEnvironment(
  policy: { readonly secrets: readonly Pick<SandboxSecret, "key" | "placeholder">[] } | undefined,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const secret of policy?.secrets ?? []) {
    environment[`CAIRN_SECRET_${secret.key}`] = secret.placeholder;
  }
  return environment;
}

/**
 * Whether the proxy scrubs `text` from answers: shorter text would match ordinary answers. A
 * secret whose value is not (one set before such values were refused) is never put into a
 * request, as an upstream that echoed it would hand it to the sandbox.
 */
export function scrubbable(text: string): boolean {
  return text.length >= minSecretValueLength;
}
