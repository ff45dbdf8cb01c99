import type { DatabaseSync } from "node:sqlite";
import { randomHex } from "../../core/ids.js";
import { transaction } from "../store/database.js";
import { hashSecret, newSecret } from "./secrets.js";

/** A signed-in browser: the project it acts as, and the token its changes must carry. */
export interface DashboardSession {
  /** `dse_` + 24 hex: names the session in audit records; not the cookie. */
  readonly id: string;
  readonly projectId: string;
  readonly csrfToken: string;
  readonly expiresAtMs: number;
}

/** Why a sign-in code was refused: the error the sign-in page shows. */
export type CodeRefusal = "code_used" | "code_expired" | "code_invalid";

/** Why a cookie stands for no session. */
export type SessionRefusal = "unknown" | "expired" | "revoked";

export interface SessionLifetimes {
  /** How long a session lasts from sign-in (fixed, not extended by use). Default 7 days. */
  readonly sessionMs: number;
  /** How long a sign-in code may wait to be used. Default 10 minutes. */
  readonly codeMs: number;
}

export const defaultLifetimes: SessionLifetimes = {
  sessionMs: 7 * 24 * 60 * 60 * 1000,
  codeMs: 10 * 60 * 1000,
};

// 24 bytes (192 bits) for a code, 32 (256 bits) for a cookie; anything else is refused unread.
export const codePattern = /^[A-Za-z0-9_-]{32}$/;
export const cookiePattern = /^[A-Za-z0-9_-]{43}$/;
/** Refused codes and ended sessions are kept this long, to say why they no longer work. */
export const keptAfterEndMs = 24 * 60 * 60 * 1000;
/** last_seen_ms is written at most this often per session: reads stay reads. */
export const lastSeenEveryMs = 60 * 1000;

/** A session's row, as both engines store it. */
export interface SessionRow {
  id: string;
  project_id: string;
  csrf_token: string;
  expires_ms: number;
  last_seen_ms: number;
  revoked_ms: number | null;
}

/**
 * Dashboard sign-in codes and sessions in SQLite. Codes and cookies are stored as their
 * SHA-256 and looked up by it, so no comparison of a secret depends on where it differs; a code
 * works once, within its lifetime; a session ends at its expiry or when it is revoked.
 */
export class DashboardSessionStore {
  private readonly sessionByCookie;

  constructor(
    private readonly db: DatabaseSync,
    private readonly now: () => number = Date.now,
    private readonly lifetimes: SessionLifetimes = defaultLifetimes,
  ) {
    this.sessionByCookie = db.prepare(
      "SELECT id, project_id, csrf_token, expires_ms, last_seen_ms, revoked_ms FROM dashboard_sessions WHERE cookie_hash = ?",
    );
  }

  /** A new one-time code for `projectId`; `createdBy` is the actor who asked for it. */
  createCode(projectId: string, createdBy: string): { code: string; expiresAtMs: number } {
    const now = this.now();
    const code = newSecret(24);
    const expiresAtMs = now + this.lifetimes.codeMs;
    this.db
      .prepare("DELETE FROM dashboard_login_codes WHERE expires_ms < ?")
      .run(now - keptAfterEndMs);
    this.db
      .prepare(
        "INSERT INTO dashboard_login_codes (code_hash, project_id, created_by, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)",
      )
      .run(hashSecret(code), projectId, createdBy, now, expiresAtMs);
    return { code, expiresAtMs };
  }

  /** Uses `code` up and starts a session of its project; or says why the code does not work. */
  signInWithCode(code: string): { session: DashboardSession; cookie: string } | CodeRefusal {
    if (!codePattern.test(code)) return "code_invalid";
    const hash = hashSecret(code);
    return transaction(this.db, () => {
      const row = this.db
        .prepare(
          "SELECT project_id, expires_ms, used_ms FROM dashboard_login_codes WHERE code_hash = ?",
        )
        .get(hash) as
        | { project_id: string; expires_ms: number; used_ms: number | null }
        | undefined;
      const now = this.now();
      const usable = usableCode(row, now);
      if (typeof usable === "string") return usable;
      this.db
        .prepare("UPDATE dashboard_login_codes SET used_ms = ? WHERE code_hash = ?")
        .run(now, hash);
      return this.start(usable.project_id, "sign-in code");
    });
  }

  /** Starts a session of `projectId`; `signedInWith` says how (a key's actor, a code). */
  signIn(projectId: string, signedInWith: string): { session: DashboardSession; cookie: string } {
    return transaction(this.db, () => this.start(projectId, signedInWith));
  }

  /** The live session a cookie stands for, or why there is none. */
  find(cookie: string): DashboardSession | SessionRefusal {
    if (!cookiePattern.test(cookie)) return "unknown";
    const row = this.sessionByCookie.get(hashSecret(cookie)) as SessionRow | undefined;
    const now = this.now();
    const found = liveSession(row, now);
    if (typeof found === "string") return found;
    if (now - found.lastSeenMs >= lastSeenEveryMs) {
      this.db
        .prepare("UPDATE dashboard_sessions SET last_seen_ms = ? WHERE id = ?")
        .run(now, found.session.id);
    }
    return found.session;
  }

  /** Ends a session now: its cookie is refused from here on. */
  revoke(sessionId: string): void {
    this.db
      .prepare("UPDATE dashboard_sessions SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL")
      .run(this.now(), sessionId);
  }

  private start(
    projectId: string,
    signedInWith: string,
  ): { session: DashboardSession; cookie: string } {
    const now = this.now();
    this.db
      .prepare("DELETE FROM dashboard_sessions WHERE expires_ms < ?")
      .run(now - keptAfterEndMs);
    const { session, cookie } = newSession(projectId, now, this.lifetimes);
    this.db
      .prepare(
        "INSERT INTO dashboard_sessions (id, project_id, cookie_hash, csrf_token, signed_in_with, created_ms, expires_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        session.id,
        projectId,
        hashSecret(cookie),
        session.csrfToken,
        signedInWith,
        now,
        session.expiresAtMs,
        now,
      );
    return { session, cookie };
  }
}

/** A sign-in code's row if it signs in at `now`; else why it does not. */
export function usableCode<Row extends { expires_ms: number; used_ms: number | null }>(
  row: Row | undefined,
  now: number,
): Row | CodeRefusal {
  if (row === undefined) return "code_invalid";
  if (row.used_ms !== null) return "code_used";
  if (row.expires_ms <= now) return "code_expired";
  return row;
}

/** The live session a cookie's row stands for at `now`, and when it was last seen; or why none. */
export function liveSession(
  row: SessionRow | undefined,
  now: number,
): { session: DashboardSession; lastSeenMs: number } | SessionRefusal {
  if (row === undefined) return "unknown";
  if (row.revoked_ms !== null) return "revoked";
  if (row.expires_ms <= now) return "expired";
  const session = {
    id: row.id,
    projectId: row.project_id,
    csrfToken: row.csrf_token,
    expiresAtMs: row.expires_ms,
  };
  return { session, lastSeenMs: row.last_seen_ms };
}

/** A new session of `projectId` from `now`, and its cookie (stored only as its hash). */
export function newSession(
  projectId: string,
  now: number,
  lifetimes: SessionLifetimes,
): { session: DashboardSession; cookie: string } {
  const session: DashboardSession = {
    id: `dse_${randomHex(12)}`,
    projectId,
    csrfToken: newSecret(32),
    expiresAtMs: now + lifetimes.sessionMs,
  };
  return { session, cookie: newSecret(32) };
}
