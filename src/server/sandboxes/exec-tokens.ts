import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** What an exec token lets its holder do: attach to one exec of one sandbox of one project. */
export interface ExecGrant {
  readonly projectId: string;
  readonly sandboxId: string;
  readonly execId: string;
  /** The sandbox token it was given to, if one: it works only while that one does. */
  readonly sandboxTokenId: string | undefined;
}

/**
 * Short-lived tokens for the exec WebSocket, for browsers, which cannot send headers with a
 * WebSocket: `?token=` grants attaching to that one exec for an hour, never the API key's
 * other powers. Signed with a key made at start, so a restart ends them (and the execs).
 */
export class ExecTokens {
  private readonly key = randomBytes(32);

  constructor(private readonly lifetimeMs = 3_600_000) {}

  issue(projectId: string, sandboxId: string, execId: string, sandboxTokenId?: string): string {
    const claims = { p: projectId, s: sandboxId, e: execId, x: Date.now() + this.lifetimeMs };
    const payload = Buffer.from(
      JSON.stringify(sandboxTokenId === undefined ? claims : { ...claims, t: sandboxTokenId }),
    ).toString("base64url");
    return `${payload}.${this.sign(payload)}`;
  }

  /** The grant of a valid, unexpired token; undefined otherwise. */
  verify(token: string): ExecGrant | undefined {
    const [payload, signature] = token.split(".");
    if (payload === undefined || signature === undefined) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as {
        p: string;
        s: string;
        e: string;
        x: number;
        t?: string;
      };
      if (claims.x < Date.now()) return undefined;
      return {
        projectId: claims.p,
        sandboxId: claims.s,
        execId: claims.e,
        sandboxTokenId: claims.t,
      };
    } catch {
      return undefined;
    }
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}
