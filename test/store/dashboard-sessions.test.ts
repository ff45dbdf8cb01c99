// The dashboard's sign-in codes and sessions on both engines, on a clock the tests move: codes
// and cookies kept only as SHA-256, a code used once (even by two instances at once), expiry,
// revocation, last_seen written at most once a minute, and ended rows cleaned up after a day.
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import type { Store } from "../../src/server/store/store.js";
import { type EngineUnderTest, eachEngine } from "./engines.js";
import { newProjectId } from "./record-fixtures.js";

const minute = 60_000;
const day = 24 * 60 * minute;
const start = Date.UTC(2025, 0, 15, 12);

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A store on a clock that stands still until the test moves it. */
async function openAt(engine: EngineUnderTest, context: Parameters<EngineUnderTest["open"]>[0]) {
  const clock = { now: start };
  const now = () => clock.now;
  const store = await engine.open(context, { now });
  const projectId = await newProjectId(store);
  return { store, clock, now, projectId };
}

async function signedIn(store: Store, projectId: string) {
  const { code } = await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
  const signed = await store.dashboardSessions.signInWithCode(code);
  if (typeof signed === "string") throw new Error(`not signed in: ${signed}`);
  return signed;
}

eachEngine("dashboard sessions", (engine) => {
  it("makes a one-time code of 192 bits, valid ten minutes, kept only as its SHA-256", async (context) => {
    const { store, projectId } = await openAt(engine, context);
    const { code, expiresAtMs } = await store.dashboardSessions.createCode(
      projectId,
      "key_a (cairn_abcd…)",
    );
    expect(code).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(expiresAtMs).toBe(start + 10 * minute);
    const rows = await engine.rows(
      "SELECT code_hash, project_id, created_by, created_ms, expires_ms, used_ms FROM dashboard_login_codes",
    );
    expect(rows).toEqual([
      {
        code_hash: sha256(code),
        project_id: projectId,
        created_by: "key_a (cairn_abcd…)",
        created_ms: start,
        expires_ms: start + 10 * minute,
        used_ms: null,
      },
    ]);
  });

  it("signs in with a code once: a session of its project, its cookie kept only as its SHA-256", async (context) => {
    const { store, projectId } = await openAt(engine, context);
    const { code } = await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
    const signed = await store.dashboardSessions.signInWithCode(code);
    if (typeof signed === "string") throw new Error(signed);
    expect(signed.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signed.session).toEqual({
      id: expect.stringMatching(/^dse_[0-9a-f]{24}$/),
      projectId,
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAtMs: start + 7 * day,
    });
    expect(await store.dashboardSessions.find(signed.cookie)).toEqual(signed.session);
    expect(await store.dashboardSessions.signInWithCode(code)).toBe("code_used");
    const rows = await engine.rows(
      "SELECT id, project_id, cookie_hash, signed_in_with, created_ms, expires_ms, last_seen_ms, revoked_ms FROM dashboard_sessions",
    );
    expect(rows).toEqual([
      {
        id: signed.session.id,
        project_id: projectId,
        cookie_hash: sha256(signed.cookie),
        signed_in_with: "sign-in code",
        created_ms: start,
        expires_ms: start + 7 * day,
        last_seen_ms: start,
        revoked_ms: null,
      },
    ]);
    expect(JSON.stringify(await engine.rows("SELECT * FROM dashboard_login_codes"))).not.toContain(
      code,
    );
  });

  it("refuses an expired code, and codes it never made, whatever they hold", async (context) => {
    const { store, clock, projectId } = await openAt(engine, context);
    const { code } = await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
    clock.now = start + 10 * minute;
    expect(await store.dashboardSessions.signInWithCode(code)).toBe("code_expired");
    const other = `${code.slice(0, -1)}${code.endsWith("A") ? "B" : "A"}`;
    for (const wrong of [
      other,
      "",
      "short",
      `${code}x`,
      sha256(code),
      "' OR '1'='1' --aaaaaaaaaaaaaaaaaa",
      "a\u0000".repeat(16),
    ]) {
      expect(await store.dashboardSessions.signInWithCode(wrong)).toBe("code_invalid");
    }
    expect(await engine.rows("SELECT id FROM dashboard_sessions")).toEqual([]);
  });

  it("signs in by another means, saying which", async (context) => {
    const { store, projectId } = await openAt(engine, context);
    const signed = await store.dashboardSessions.signIn(projectId, "key_b (cairn_efgh…)");
    expect(await store.dashboardSessions.find(signed.cookie)).toEqual(signed.session);
    expect(await engine.rows("SELECT signed_in_with FROM dashboard_sessions")).toEqual([
      { signed_in_with: "key_b (cairn_efgh…)" },
    ]);
  });

  it("ends a session at its expiry and when it is revoked, and knows no other cookie", async (context) => {
    const { store, clock, projectId } = await openAt(engine, context);
    const kept = await signedIn(store, projectId);
    const revoked = await signedIn(store, projectId);
    clock.now = start + minute;
    await store.dashboardSessions.revoke(revoked.session.id);
    clock.now = start + 2 * minute;
    await store.dashboardSessions.revoke(revoked.session.id);
    await store.dashboardSessions.revoke("dse_000000000000000000000000");
    expect(await store.dashboardSessions.find(revoked.cookie)).toBe("revoked");
    expect(
      await engine.rows("SELECT revoked_ms FROM dashboard_sessions WHERE revoked_ms IS NOT NULL"),
    ).toEqual([{ revoked_ms: start + minute }]);
    const wrong = `${kept.cookie.slice(0, -1)}${kept.cookie.endsWith("A") ? "B" : "A"}`;
    for (const cookie of [
      wrong,
      "",
      kept.session.id,
      kept.session.csrfToken,
      sha256(kept.cookie),
      "a\u0000".repeat(22),
    ]) {
      expect(await store.dashboardSessions.find(cookie)).toBe("unknown");
    }
    clock.now = kept.session.expiresAtMs - 1;
    expect(await store.dashboardSessions.find(kept.cookie)).toEqual(kept.session);
    clock.now = kept.session.expiresAtMs;
    expect(await store.dashboardSessions.find(kept.cookie)).toBe("expired");
  });

  it("writes when a session was last seen at most once a minute", async (context) => {
    const { store, clock, projectId } = await openAt(engine, context);
    const { cookie } = await signedIn(store, projectId);
    const lastSeen = async () =>
      (await engine.rows("SELECT last_seen_ms FROM dashboard_sessions"))[0]?.last_seen_ms;
    clock.now = start + 59_999;
    await store.dashboardSessions.find(cookie);
    expect(await lastSeen()).toBe(start);
    clock.now = start + minute;
    await store.dashboardSessions.find(cookie);
    expect(await lastSeen()).toBe(start + minute);
    clock.now = start + minute + 30_000;
    await store.dashboardSessions.find(cookie);
    expect(await lastSeen()).toBe(start + minute);
    clock.now = start + 5 * minute;
    await store.dashboardSessions.find(cookie);
    expect(await lastSeen()).toBe(start + 5 * minute);
  });

  it("forgets codes and sessions a day after they ended, and not before", async (context) => {
    const { store, clock, projectId } = await openAt(engine, context);
    const { code } = await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
    const session = await signedIn(store, projectId);
    const codeExpiry = start + 10 * minute;
    // Within a day of their end they are still refused for what they are.
    clock.now = session.session.expiresAtMs + day;
    await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
    await store.dashboardSessions.signIn(projectId, "key_a (cairn_abcd…)");
    expect(await store.dashboardSessions.find(session.cookie)).toBe("expired");
    // The code ended long before: gone.
    expect(codeExpiry < clock.now - day).toBe(true);
    expect(await store.dashboardSessions.signInWithCode(code)).toBe("code_invalid");
    clock.now = session.session.expiresAtMs + day + 1;
    await store.dashboardSessions.signIn(projectId, "key_a (cairn_abcd…)");
    expect(await store.dashboardSessions.find(session.cookie)).toBe("unknown");
    expect(await engine.rows("SELECT id FROM dashboard_sessions")).toHaveLength(2);
  });

  it("starts one session when two instances are given the same code at once", async (context) => {
    const { store, now, projectId } = await openAt(engine, context);
    const other = await engine.openSecondClient({ now });
    for (let round = 0; round < 10; round++) {
      const { code } = await store.dashboardSessions.createCode(projectId, "key_a (cairn_abcd…)");
      const answers = await Promise.all([
        store.dashboardSessions.signInWithCode(code),
        other.dashboardSessions.signInWithCode(code),
      ]);
      const sessions = answers.filter((each) => typeof each !== "string");
      expect(sessions).toHaveLength(1);
      expect(answers.filter((each) => each === "code_used")).toHaveLength(1);
    }
    expect(await engine.rows("SELECT id FROM dashboard_sessions")).toHaveLength(10);
  });
});
