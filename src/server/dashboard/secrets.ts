import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new secret of `bytes` random bytes, as base64url (32 bytes: 43 characters). */
export function newSecret(bytes: number): string {
  return randomBytes(bytes).toString("base64url");
}

/** How a secret is stored: its SHA-256, so a copy of the database gives none away. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/**
 * Whether two secrets are the same, in a time that tells nothing of where they differ: both are
 * hashed first, so lengths do not matter to the comparison either.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
