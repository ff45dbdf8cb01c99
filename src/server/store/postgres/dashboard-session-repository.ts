import { hashSecret, newSecret } from "../../dashboard/secrets.js";
import {
  codePattern,
  cookiePattern,
  type DashboardSession,
  defaultLifetimes,
  keptAfterEndMs,
  lastSeenEveryMs,
  liveSession,
  newSession,
  type SessionLifetimes,
  type SessionRow,
  usableCode,
} from "../../dashboard/session-store.js";
import type { DashboardSessionRepository } from "../store.js";
import type { PostgresSql } from "./connection.js";
import { inTransaction, type PostgresTransaction } from "./retried-transaction.js";

/**
 * The dashboard's sign-in codes and sessions, as session-store.ts keeps them in SQLite (codes and
 * cookies stored as SHA-256), on the clock `now`. A code's row is held while it is used, so
 * that two instances given the same code at once start one session: the second finds it used.
 */
export function postgresDashboardSessions(
  sql: PostgresSql,
  now: () => number = Date.now,
  lifetimes: SessionLifetimes = defaultLifetimes,
): DashboardSessionRepository {
  const start = async (
    transaction: PostgresTransaction,
    projectId: string,
    signedInWith: string,
  ): Promise<{ session: DashboardSession; cookie: string }> => {
    const at = now();
    await transaction`DELETE FROM dashboard_sessions WHERE expires_ms < ${at - keptAfterEndMs}`;
    const { session, cookie } = newSession(projectId, at, lifetimes);
    await transaction`
      INSERT INTO dashboard_sessions (id, project_id, cookie_hash, csrf_token, signed_in_with,
        created_ms, expires_ms, last_seen_ms)
      VALUES (${session.id}, ${projectId}, ${hashSecret(cookie)}, ${session.csrfToken},
        ${signedInWith}, ${at}, ${session.expiresAtMs}, ${at})`;
    return { session, cookie };
  };

  return {
    async createCode(projectId, createdBy) {
      const at = now();
      const code = newSecret(24);
      const expiresAtMs = at + lifetimes.codeMs;
      await sql`DELETE FROM dashboard_login_codes WHERE expires_ms < ${at - keptAfterEndMs}`;
      await sql`
        INSERT INTO dashboard_login_codes (code_hash, project_id, created_by, created_ms,
          expires_ms)
        VALUES (${hashSecret(code)}, ${projectId}, ${createdBy}, ${at}, ${expiresAtMs})`;
      return { code, expiresAtMs };
    },

    async signInWithCode(code) {
      if (!codePattern.test(code)) return "code_invalid";
      const hash = hashSecret(code);
      return inTransaction(sql, async (transaction) => {
        const [row] = await transaction<
          Array<{ project_id: string; expires_ms: number; used_ms: number | null }>
        >`
          SELECT project_id, expires_ms, used_ms FROM dashboard_login_codes
          WHERE code_hash = ${hash} FOR UPDATE`;
        const at = now();
        const usable = usableCode(row, at);
        if (typeof usable === "string") return usable;
        await transaction`UPDATE dashboard_login_codes SET used_ms = ${at} WHERE code_hash = ${hash}`;
        return start(transaction, usable.project_id, "sign-in code");
      });
    },

    signIn: (projectId, signedInWith) =>
      inTransaction(sql, (transaction) => start(transaction, projectId, signedInWith)),

    async find(cookie) {
      if (!cookiePattern.test(cookie)) return "unknown";
      const [row] = await sql<SessionRow[]>`
        SELECT id, project_id, csrf_token, expires_ms, last_seen_ms, revoked_ms
        FROM dashboard_sessions WHERE cookie_hash = ${hashSecret(cookie)}`;
      const at = now();
      const found = liveSession(row, at);
      if (typeof found === "string") return found;
      if (at - found.lastSeenMs >= lastSeenEveryMs) {
        // Conditional, so that instances reading the session at once write it once.
        await sql`
          UPDATE dashboard_sessions SET last_seen_ms = ${at}
          WHERE id = ${found.session.id} AND last_seen_ms <= ${at - lastSeenEveryMs}`;
      }
      return found.session;
    },

    async revoke(sessionId) {
      await sql`
        UPDATE dashboard_sessions SET revoked_ms = ${now()}
        WHERE id = ${sessionId} AND revoked_ms IS NULL`;
    },
  };
}
