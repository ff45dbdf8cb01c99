import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { MasterKey } from "./master-key.js";

/** Where a sealed value belongs: bound into its ciphertext as associated data. */
export interface SecretAddress {
  readonly projectId: string;
  readonly store: string;
  readonly key: string;
}

/** A value as it is stored: never the plaintext. */
export interface SealedValue {
  readonly keyId: string;
  readonly nonce: Uint8Array;
  /** AES-256-GCM ciphertext with its 16-byte tag at the end. */
  readonly ciphertext: Uint8Array;
}

/** Why a sealed value could not be opened. */
export class UnsealError extends Error {
  constructor(
    readonly address: SecretAddress,
    readonly reason: "wrong_key" | "tampered",
    message: string,
  ) {
    super(message);
    this.name = "UnsealError";
  }
}

const tagBytes = 16;

/**
 * Seals a secret value with AES-256-GCM under the master key: a random 96-bit nonce per value,
 * and the project, store and key as associated data, so a ciphertext copied to another row
 * does not open.
 */
export function seal(master: MasterKey, address: SecretAddress, plaintext: string): SealedValue {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", master.key, nonce, { authTagLength: tagBytes });
  cipher.setAAD(associatedData(address));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { keyId: master.id, nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
}

/**
 * Opens a sealed value. Throws an {@link UnsealError} naming the store and key when it was sealed
 * under another master key, or when its bytes (or its row) were changed: never garbage.
 */
export function unseal(master: MasterKey, address: SecretAddress, sealed: SealedValue): string {
  const where = `secret "${address.key}" of store "${address.store}"`;
  if (sealed.keyId !== master.id) {
    throw new UnsealError(
      address,
      "wrong_key",
      `${where} cannot be decrypted: it was sealed with master key ${sealed.keyId}, and this service has ${master.id} (${master.source}); start it with the key the secret was set with, or set the secret again`,
    );
  }
  try {
    const ciphertext = Buffer.from(sealed.ciphertext);
    const decipher = createDecipheriv("aes-256-gcm", master.key, sealed.nonce, {
      authTagLength: tagBytes,
    });
    decipher.setAAD(associatedData(address));
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - tagBytes));
    const body = ciphertext.subarray(0, ciphertext.length - tagBytes);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    throw new UnsealError(
      address,
      "tampered",
      `${where} cannot be decrypted: its stored ciphertext does not authenticate (changed, truncated or moved from another secret); set the secret again`,
    );
  }
}

// A JSON array: no two addresses give the same bytes.
function associatedData({ projectId, store, key }: SecretAddress): Buffer {
  return Buffer.from(JSON.stringify(["cairn-secret-v1", projectId, store, key]), "utf8");
}

const placeholderKeys = new WeakMap<MasterKey, Buffer>();

/**
 * The placeholder a sandbox holds for a secret: `cairn_sealed_` and 32 hex digits of an HMAC,
 * keyed by a key derived from the master key, over the sandbox and the secret's id. Stable for
 * one sandbox across restarts; another sandbox, or the same key set again (a new id), gets
 * another string.
 */
export function placeholderFor(master: MasterKey, sandboxId: string, secretId: string): string {
  let key = placeholderKeys.get(master);
  if (key === undefined) {
    key = Buffer.from(hkdfSync("sha256", master.key, "", "cairn placeholders v1", 32));
    placeholderKeys.set(master, key);
  }
  const mac = createHmac("sha256", key).update(`${sandboxId}\n${secretId}`).digest("hex");
  return `cairn_sealed_${mac.slice(0, 32)}`;
}
