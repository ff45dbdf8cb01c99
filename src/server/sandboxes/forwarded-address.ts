import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** The address of the client whose request one instance forwarded to another. */
export const forwardedForHeader = "x-cairn-forwarded-for";
/** `<unix seconds>.<HMAC-SHA256 of the address and those seconds>`, under the forwarding key. */
export const forwardedProofHeader = "x-cairn-forwarded-proof";

/** How old a proof may be: a forwarded request is sent at once. */
const proofLifetimeSeconds = 60;

/**
 * The key the instances on one database prove forwarded client addresses with: derived from the
 * master key they share (CAIRN_MASTER_KEY). An instance with another master key cannot prove an
 * address, and its forwarded requests count against its own address, as any client's would.
 */
export function forwardingKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, "", "cairn forwarded address v1", 32));
}

/** The headers that tell the owner who the client is, with their proof. */
export function signedAddress(
  key: Buffer,
  address: string,
  nowMs = Date.now(),
): Record<string, string> {
  const seconds = Math.floor(nowMs / 1000);
  return {
    [forwardedForHeader]: address,
    [forwardedProofHeader]: `${seconds}.${proof(key, address, seconds)}`,
  };
}

/**
 * The client address another instance forwarded with a valid, fresh proof; undefined when the
 * request carries none, or one this key did not make (a client's own headers are never trusted).
 */
export function verifiedAddress(
  key: Buffer,
  headers: IncomingHttpHeaders | Headers,
  nowMs = Date.now(),
): string | undefined {
  const read = (name: string) =>
    headers instanceof Headers ? (headers.get(name) ?? undefined) : headers[name];
  const address = read(forwardedForHeader);
  const given = read(forwardedProofHeader);
  if (typeof address !== "string" || typeof given !== "string" || address.length > 64) {
    return undefined;
  }
  const match = /^(\d{1,12})\.([0-9a-f]{64})$/.exec(given);
  if (match === null) return undefined;
  const seconds = Number(match[1]);
  if (Math.abs(nowMs / 1000 - seconds) > proofLifetimeSeconds) return undefined;
  const expected = Buffer.from(proof(key, address, seconds), "hex");
  const presented = Buffer.from(match[2] as string, "hex");
  return timingSafeEqual(expected, presented) ? address : undefined;
}

function proof(key: Buffer, address: string, seconds: number): string {
  return createHmac("sha256", key).update(`${address}\n${seconds}`).digest("hex");
}
