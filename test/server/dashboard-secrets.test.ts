import { DatabaseSync } from "node:sqlite";
import { describe, expect, it, vi } from "vitest";

// Every comparison of a secret the request brings goes through timingSafeEqual (the CSRF token)
// or a lookup by SHA-256 (codes and cookies): none stops at the first byte that differs.
const compared = vi.hoisted(() => ({ calls: 0 }));
vi.mock("node:crypto", async (importOriginal) => {
  const crypto = await importOriginal<typeof import("node:crypto")>();
  return {
    ...crypto,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.calls++;
      return crypto.timingSafeEqual(a, b);
    },
  };
});

const { sameSecret, hashSecret, newSecret } = await import("../../src/server/dashboard/secrets.js");
const { DashboardSessionStore } = await import("../../src/server/dashboard/session-store.js");
const { migrate } = await import("../../src/server/store/migrations.js");

describe("the dashboard's secrets", () => {
  it("compares tokens in constant time, whatever their lengths", () => {
    const token = newSecret(32);
    const before = compared.calls;
    expect(sameSecret(token, token)).toBe(true);
    expect(sameSecret(`${token.slice(0, -1)}x`, token)).toBe(token.endsWith("x"));
    expect(sameSecret(`x${token.slice(1)}`, token)).toBe(token.startsWith("x"));
    expect(sameSecret("", token)).toBe(false);
    expect(sameSecret(`${token}${token}`, token)).toBe(false);
    expect(compared.calls - before).toBe(5);
  });

  it("makes secrets of the given strength, and stores their SHA-256 only", () => {
    expect(newSecret(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSecret(24)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(new Set(Array.from({ length: 100 }, () => newSecret(24))).size).toBe(100);
    expect(hashSecret("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("ends codes and sessions by the store's clock", () => {
    const db = new DatabaseSync(":memory:");
    migrate(db);
    db.exec("INSERT INTO projects VALUES ('prj_a', 'a', '2026-11-01T00:00:00Z')");
    let now = 1_000_000;
    const store = new DashboardSessionStore(db, () => now, { sessionMs: 5_000, codeMs: 1_000 });
    const late = store.createCode("prj_a", "key_a");
    now += 1_000;
    expect(store.signInWithCode(late.code)).toBe("code_expired");
    const code = store.createCode("prj_a", "key_a");
    now += 999;
    const signedIn = store.signInWithCode(code.code);
    if (typeof signedIn === "string") throw new Error(`refused: ${signedIn}`);
    expect(store.signInWithCode(code.code)).toBe("code_used");
    expect(store.find(signedIn.cookie)).toMatchObject({ projectId: "prj_a" });
    now += 5_000;
    expect(store.find(signedIn.cookie)).toBe("expired");
    const again = store.signIn("prj_a", "key_a");
    store.revoke(again.session.id);
    expect(store.find(again.cookie)).toBe("revoked");
    expect(store.find(newSecret(32))).toBe("unknown");
    db.close();
  });
});
