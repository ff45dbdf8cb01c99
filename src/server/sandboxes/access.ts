import { randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { SandboxTokens } from "../store/sandbox-tokens.js";
import { SignedUrlUses } from "../store/signed-url-uses.js";
import { TokenSockets } from "./token-sockets.js";
import { UrlSigner } from "./url-signing.js";

/** Ways into one sandbox without the project's API key: browser tokens and signed URLs. */
export interface SandboxAccess {
  readonly tokens: SandboxTokens;
  /** The exec WebSockets tokens hold open, closed when they end. */
  readonly sockets: TokenSockets;
  readonly signer: UrlSigner;
  readonly uses: SignedUrlUses;
}

/**
 * The stores and the signer of sandbox access. Without `signingKey` (an app made without
 * `createServer`) URLs are signed with a key made now, and end when the process does.
 */
export function sandboxAccess(db: DatabaseSync, signingKey?: Buffer): SandboxAccess {
  return {
    tokens: new SandboxTokens(db),
    sockets: new TokenSockets(),
    signer: new UrlSigner(signingKey ?? randomBytes(32)),
    uses: new SignedUrlUses(db),
  };
}
