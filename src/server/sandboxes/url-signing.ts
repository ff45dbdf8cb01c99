import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { isSandboxId } from "../../core/ids.js";

/** What a signed URL lets its holder do: one method on one path of one sandbox, until then. */
export interface UrlGrant {
  readonly method: "GET" | "PUT";
  readonly projectId: string;
  readonly sandboxId: string;
  /** Absolute and canonical (links resolved) under /workspace, as it was when signed. */
  readonly path: string;
  /** Unix time in seconds after which the URL is refused. */
  readonly expires: number;
  /** The most bytes a PUT may write; undefined for no cap. */
  readonly maxBytes: number | undefined;
  /** Random, so that two URLs for the same grant differ and a PUT can be spent once. */
  readonly nonce: string;
}

/** The query a signed URL carries, besides the sandbox id in its path. */
const parameters = ["path", "project", "expires", "max", "nonce", "signature"] as const;

const projectIdPattern = /^prj_[0-9a-f]{24}$/;
const noncePattern = /^[A-Za-z0-9_-]{22}$/;
const expiresPattern = /^[1-9][0-9]{0,11}$/;
const maxPattern = /^[1-9][0-9]{0,15}$/;

/**
 * The key signed URLs are signed with, derived from the master key (HKDF, its own label): one
 * secret to keep, set once for every instance by `CAIRN_MASTER_KEY`, so URLs survive a restart
 * and any instance checks another's; rotating the master key ends every URL given out.
 */
export function urlSigningKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, "", "cairn signed urls v1", 32));
}

/**
 * Signs and checks the URLs of `POST …/files/signed-url`: HMAC-SHA256 over every field of the
 * grant (method, project, sandbox, canonical path, expiry, size cap, nonce), so a change to any
 * byte of any of them, or the URL used with another method or sandbox, fails the check.
 */
export class UrlSigner {
  constructor(private readonly key: Buffer) {}

  /** A new grant's query parameters (a fresh nonce each time). */
  sign(grant: Omit<UrlGrant, "nonce">): URLSearchParams {
    const full: UrlGrant = { ...grant, nonce: randomBytes(16).toString("base64url") };
    const query = new URLSearchParams({
      path: full.path,
      project: full.projectId,
      expires: String(full.expires),
    });
    if (full.maxBytes !== undefined) query.set("max", String(full.maxBytes));
    query.set("nonce", full.nonce);
    query.set("signature", this.mac(full).toString("base64url"));
    return query;
  }

  /**
   * The grant a request's URL carries when its signature is right for this method and sandbox;
   * undefined for anything else: a missing, repeated, unknown or malformed parameter, a wrong
   * signature. Expiry and single use are the caller's (they need a clock and the store).
   */
  verify(
    method: string,
    sandboxId: string,
    query: ReadonlyArray<readonly [string, string]>,
  ): UrlGrant | undefined {
    if (method !== "GET" && method !== "PUT") return undefined;
    if (!isSandboxId(sandboxId)) return undefined;
    const values = new Map<string, string>();
    for (const [name, value] of query) {
      if (!(parameters as readonly string[]).includes(name) || values.has(name)) return undefined;
      values.set(name, value);
    }
    const path = values.get("path");
    const projectId = values.get("project") ?? "";
    const expires = values.get("expires") ?? "";
    const max = values.get("max");
    const nonce = values.get("nonce") ?? "";
    const signature = values.get("signature") ?? "";
    if (
      path === undefined ||
      !projectIdPattern.test(projectId) ||
      !expiresPattern.test(expires) ||
      (max !== undefined && !maxPattern.test(max)) ||
      !noncePattern.test(nonce) ||
      !/^[A-Za-z0-9_-]{43}$/.test(signature)
    ) {
      return undefined;
    }
    const grant: UrlGrant = {
      method,
      projectId,
      sandboxId,
      path,
      expires: Number(expires),
      maxBytes: max === undefined ? undefined : Number(max),
      nonce,
    };
    const given = Buffer.from(signature, "base64url");
    // The base64url of 32 bytes has one spelling only if its last character's spare bits are 0.
    if (given.toString("base64url") !== signature) return undefined;
    return timingSafeEqual(given, this.mac(grant)) ? grant : undefined;
  }

  private mac(grant: UrlGrant): Buffer {
    // A JSON array: no field can borrow another's bytes, whatever a path holds.
    const fields = [
      "cairn signed url v1",
      grant.method,
      grant.projectId,
      grant.sandboxId,
      grant.path,
      grant.expires,
      grant.maxBytes ?? null,
      grant.nonce,
    ];
    return createHmac("sha256", this.key).update(JSON.stringify(fields)).digest();
  }
}
