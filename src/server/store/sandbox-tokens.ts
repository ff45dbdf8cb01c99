import { createHash, randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import type {
  CreatedSandboxToken,
  SandboxTokenInfo,
  SandboxTokenScope,
} from "../../core/wire/sandbox-access.js";

/** What every sandbox token starts with: tells it apart from an API key at a glance. */
export const sandboxTokenPrefix = "cairn_sbt_";

const tokenPattern = /^cairn_sbt_[A-Za-z0-9_-]{43}$/;

interface TokenRow {
  id: string;
  project_id: string;
  sandbox_id: string;
  scopes: string;
  origin: string | null;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** A live token's grant: one sandbox of one project, its scopes, and the Origin it is bound to. */
export interface SandboxTokenGrant {
  readonly id: string;
  readonly projectId: string;
  readonly sandboxId: string;
  readonly scopes: ReadonlySet<SandboxTokenScope>;
  readonly origin: string | null;
  /** When it stops working, in ms since the epoch. */
  readonly expiresAtMs: number;
}

/** How a browser token is stored: its SHA-256, in hex (agent web tokens are stored the same way). */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Browser tokens, each scoped to one sandbox: stored as their SHA-256 (a copy of the database
 * gives no token away), expiring, revocable at once.
 */
export class SandboxTokens {
  private readonly byHash;
  private readonly byId;

  constructor(private readonly db: DatabaseSync) {
    this.byHash = db.prepare("SELECT * FROM sandbox_tokens WHERE token_hash = ?");
    this.byId = db.prepare("SELECT * FROM sandbox_tokens WHERE id = ?");
  }

  /** Whether `value` has a token's shape (and so is no API key to look up). */
  static looksLikeToken(value: string): boolean {
    return value.startsWith(sandboxTokenPrefix);
  }

  create(
    projectId: string,
    sandboxId: string,
    request: {
      scopes: readonly SandboxTokenScope[];
      expiresInSeconds: number;
      origin?: string | undefined;
    },
    now = new Date(),
  ): CreatedSandboxToken {
    const token = `${sandboxTokenPrefix}${randomBytes(32).toString("base64url")}`;
    const row: TokenRow = {
      id: `sbt_${randomBytes(12).toString("hex")}`,
      project_id: projectId,
      sandbox_id: sandboxId,
      scopes: JSON.stringify([...request.scopes].sort()),
      origin: request.origin ?? null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + request.expiresInSeconds * 1000).toISOString(),
      revoked_at: null,
    };
    this.db
      .prepare(
        `INSERT INTO sandbox_tokens (id, project_id, sandbox_id, token_hash, scopes, origin,
          created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        projectId,
        sandboxId,
        hashToken(token),
        row.scopes,
        row.origin,
        row.created_at,
        row.expires_at,
      );
    return { ...toInfo(row), token };
  }

  /** The sandbox's tokens, newest first, revoked and expired ones included; never a value. */
  list(projectId: string, sandboxId: string): SandboxTokenInfo[] {
    const rows = this.db
      .prepare(
        "SELECT * FROM sandbox_tokens WHERE project_id = ? AND sandbox_id = ? ORDER BY created_at DESC, id",
      )
      .all(projectId, sandboxId) as unknown as TokenRow[];
    return rows.map(toInfo);
  }

  /** Revokes one token; undefined when the sandbox has no token of that id. */
  revoke(
    projectId: string,
    sandboxId: string,
    id: string,
    now = new Date(),
  ): SandboxTokenInfo | undefined {
    this.db
      .prepare(
        "UPDATE sandbox_tokens SET revoked_at = ? WHERE project_id = ? AND sandbox_id = ? AND id = ? AND revoked_at IS NULL",
      )
      .run(now.toISOString(), projectId, sandboxId, id);
    const row = this.db
      .prepare("SELECT * FROM sandbox_tokens WHERE project_id = ? AND sandbox_id = ? AND id = ?")
      .get(projectId, sandboxId, id) as unknown as TokenRow | undefined;
    return row === undefined ? undefined : toInfo(row);
  }

  /** Revokes every live token of a sandbox (it was deleted). */
  revokeAll(projectId: string, sandboxId: string, now = new Date()): void {
    this.db
      .prepare(
        "UPDATE sandbox_tokens SET revoked_at = ? WHERE project_id = ? AND sandbox_id = ? AND revoked_at IS NULL",
      )
      .run(now.toISOString(), projectId, sandboxId);
  }

  /** The grant of a token that exists, is not revoked and has not expired; else undefined. */
  grantOf(token: string, now = new Date()): SandboxTokenGrant | undefined {
    if (!tokenPattern.test(token)) return undefined;
    return liveGrant(this.byHash.get(hashToken(token)) as unknown as TokenRow | undefined, now);
  }

  /** As {@link grantOf}, by the token's id: for what a token was given, which lives no longer. */
  grantById(id: string, now = new Date()): SandboxTokenGrant | undefined {
    return liveGrant(this.byId.get(id) as unknown as TokenRow | undefined, now);
  }
}

function liveGrant(row: TokenRow | undefined, now: Date): SandboxTokenGrant | undefined {
  const expiresAtMs = Date.parse(row?.expires_at ?? "");
  if (row === undefined || row.revoked_at !== null || expiresAtMs <= now.getTime()) {
    return undefined;
  }
  return {
    expiresAtMs,
    id: row.id,
    projectId: row.project_id,
    sandboxId: row.sandbox_id,
    scopes: new Set(JSON.parse(row.scopes) as SandboxTokenScope[]),
    origin: row.origin,
  };
}

function toInfo(row: TokenRow): SandboxTokenInfo {
  return {
    id: row.id,
    sandboxId: row.sandbox_id,
    scopes: JSON.parse(row.scopes) as SandboxTokenScope[],
    origin: row.origin,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}
