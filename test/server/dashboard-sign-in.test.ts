import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeDashboard, fromDashboard, rawGet, signIn } from "./dashboard-helpers.js";
import { startTestServer, type TestServer } from "./helpers.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Changes rows of the server's store from the side, as time passing or an admin would. */
function store(t: TestServer, sql: string, ...values: Array<string | number>): void {
  const db = new DatabaseSync(join(t.dataDir, "cairn.db"));
  try {
    db.prepare(sql).run(...values);
  } finally {
    db.close();
  }
}

async function newCode(t: TestServer): Promise<{ url: string; code: string; expiresAt: string }> {
  const answer = await t.call("POST", "/auth/login-codes");
  expect(answer.status).toBe(201);
  return answer.json();
}

describe("signing in to the dashboard", () => {
  let t: TestServer;
  let directory: string;
  beforeAll(async () => {
    directory = fakeDashboard();
    // Many refusals on purpose: the failed-attempt limit has a test of its own below.
    t = await startTestServer({
      dashboard: { directory },
      failedAuthLimit: { requestsPerSecond: 1000, burst: 1000 },
    });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it("makes a one-time code of 192 random bits, valid 10 minutes, stored only as its SHA-256", async () => {
    const before = Date.now();
    const link = await newCode(t);
    const after = Date.now();
    expect(link.code).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(link.url).toBe(`${t.server.url}/login?code=${link.code}`);
    const expires = Date.parse(link.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 600_000);
    expect(expires).toBeLessThanOrEqual(after + 600_000);
    expect((await newCode(t)).code).not.toBe(link.code);
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"), { readOnly: true });
    try {
      const rows = db.prepare("SELECT * FROM dashboard_login_codes").all();
      expect(rows.map((row) => row.code_hash)).toContain(sha256(link.code));
      expect(JSON.stringify(rows)).not.toContain(link.code);
    } finally {
      db.close();
    }
  });

  it("opens a session with the link: an HttpOnly, SameSite=Strict cookie of 256 bits, then /ui/", async () => {
    const link = await newCode(t);
    const login = await fetch(link.url, { redirect: "manual" });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("/ui/");
    expect(login.headers.get("cache-control")).toBe("no-store");
    const cookie = login.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(
      /^cairn_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const value = cookie.split(";")[0] ?? "";
    const session = await fetch(`${t.server.url}/auth/session`, { headers: { cookie: value } });
    expect(session.status).toBe(200);
    expect(session.headers.get("cache-control")).toBe("no-store");
    const body = await session.json();
    expect(body).toEqual({
      project: { id: expect.stringMatching(/^prj_/), name: "default" },
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
    });
    // Fixed: 7 days from sign-in, whatever the use.
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"), { readOnly: true });
    try {
      const rows = JSON.stringify(db.prepare("SELECT * FROM dashboard_sessions").all());
      expect(rows).toContain(sha256(value.slice("cairn_session=".length)));
      expect(rows).not.toContain(value.slice("cairn_session=".length));
    } finally {
      db.close();
    }
  });

  it("marks the cookie Secure when the request came over https (a proxy in front says so)", async () => {
    const link = await newCode(t);
    const login = await fetch(link.url, {
      redirect: "manual",
      headers: { "x-forwarded-proto": "https" },
    });
    expect(login.headers.get("set-cookie")).toMatch(/; HttpOnly; Secure; SameSite=Strict$/);
  });

  it("lets the cookie stand for the project's key on the API, and records the session, never the cookie", async () => {
    const session = await signIn(t);
    const list = await fetch(`${t.server.url}/analytics/traces`, {
      headers: { cookie: session.cookie },
    });
    expect(list.status).toBe(200);
    const published = await fetch(`${t.server.url}/versions`, {
      method: "POST",
      headers: { ...fromDashboard(t, session), "content-type": "application/json" },
      body: JSON.stringify({ version: "1.0.0", description: "from the dashboard" }),
    });
    expect(published.status).toBe(201);
    const history = (await (await t.call("GET", "/versions")).json()).history;
    const actor: string = history.at(-1).actor;
    expect(actor).toMatch(/^dashboard:dse_[0-9a-f]{24}$/);
    expect(session.cookie).not.toContain(actor.slice("dashboard:".length));
  });

  it("refuses a used code: no cookie, to the sign-in page with code_used", async () => {
    const link = await newCode(t);
    expect((await fetch(link.url, { redirect: "manual" })).status).toBe(303);
    const again = await fetch(link.url, { redirect: "manual" });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/ui/login?error=code_used");
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  it("refuses an expired code with code_expired", async () => {
    const link = await newCode(t);
    store(
      t,
      "UPDATE dashboard_login_codes SET expires_ms = ? WHERE code_hash = ?",
      Date.now() - 1,
      sha256(link.code),
    );
    const login = await fetch(link.url, { redirect: "manual" });
    expect(login.headers.get("location")).toBe("/ui/login?error=code_expired");
    expect(login.headers.get("set-cookie")).toBeNull();
  });

  it.each([
    ["unknown", "A".repeat(32)],
    ["missing", undefined],
    ["empty", ""],
    ["short", "abc"],
    ["long", "A".repeat(5000)],
    ["SQL", "' OR 1=1 --"],
    ["NUL", "AAAAAAAAAAAAAAAA\u0000AAAAAAAAAAAAAAA"],
  ])("refuses a code that is %s with code_invalid", async (_, code) => {
    const path = code === undefined ? "/login" : `/login?code=${encodeURIComponent(code)}`;
    const login = await fetch(`${t.server.url}${path}`, { redirect: "manual" });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("/ui/login?error=code_invalid");
    expect(login.headers.get("set-cookie")).toBeNull();
  });

  it("does not use a code up for HEAD (a link checker)", async () => {
    const link = await newCode(t);
    const head = await rawGet(t.server.url, `/login?code=${link.code}`, {}, "HEAD");
    expect(head.headers["set-cookie"]).toBeUndefined();
    const login = await fetch(link.url, { redirect: "manual" });
    expect(login.headers.get("location")).toBe("/ui/");
  });

  it("exchanges the API key for the same session, once, from the sign-in page", async () => {
    const answer = await fetch(`${t.server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: t.server.url },
      body: JSON.stringify({ apiKey: t.apiKey }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("set-cookie")).toMatch(
      /^cairn_session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const body = await answer.json();
    expect(body.project.name).toBe("default");
    expect(JSON.stringify(body)).not.toContain(t.apiKey);
    const cookie = answer.headers.get("set-cookie")?.split(";")[0] ?? "";
    const session = await (
      await fetch(`${t.server.url}/auth/session`, { headers: { cookie } })
    ).json();
    expect(session.csrfToken).toBe(body.csrfToken);
  });

  it("refuses a bad key (401, the usual body), bad bodies (400, 415) and another origin (403)", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${t.server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    const wrong = await post(JSON.stringify({ apiKey: "cairn_not-a-key-of-anyone-000" }));
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({
      error: "unauthorized",
      message: "the API key is not valid",
    });
    expect(wrong.headers.get("set-cookie")).toBeNull();
    const extra = await post(JSON.stringify({ apiKey: t.apiKey, project: "other" }));
    expect(extra.status).toBe(400);
    expect((await extra.json()).message).toContain('"project"');
    const notJson = await post(`{"apiKey": "${t.apiKey}"`);
    expect(notJson.status).toBe(400);
    // The parser's words would quote the body, which holds the key.
    expect(await notJson.text()).not.toContain(t.apiKey);
    const form = await fetch(`${t.server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ apiKey: t.apiKey }),
    });
    expect(form.status).toBe(415);
    const foreign = await post(JSON.stringify({ apiKey: t.apiKey }), {
      origin: "http://evil.example",
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toBe("csrf_failed");
    expect(foreign.headers.get("set-cookie")).toBeNull();
  });

  it("signs out: the session is revoked, the cookie cleared, and refused everywhere after", async () => {
    const session = await signIn(t);
    const withoutToken = await fetch(`${t.server.url}/auth/logout`, {
      method: "POST",
      headers: { cookie: session.cookie, origin: t.server.url },
    });
    expect(withoutToken.status).toBe(403);
    expect(
      (await fetch(`${t.server.url}/auth/session`, { headers: { cookie: session.cookie } })).status,
    ).toBe(200);
    const out = await fetch(`${t.server.url}/auth/logout`, {
      method: "POST",
      headers: fromDashboard(t, session),
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toBe(
      "cairn_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
    );
    for (const path of ["/auth/session", "/analytics/traces", "/versions"]) {
      const after = await fetch(`${t.server.url}${path}`, { headers: { cookie: session.cookie } });
      expect(after.status, path).toBe(401);
      expect((await after.json()).message, path).toContain("signed out");
    }
    const db = new DatabaseSync(join(t.dataDir, "cairn.db"), { readOnly: true });
    try {
      const revoked = db
        .prepare(
          "SELECT count(*) AS count FROM dashboard_sessions WHERE cookie_hash = ? AND revoked_ms IS NOT NULL",
        )
        .get(sha256(session.cookie.slice("cairn_session=".length)));
      expect(revoked?.count).toBe(1);
    } finally {
      db.close();
    }
  });

  it("refuses an expired session with 401, and clears its cookie", async () => {
    const session = await signIn(t);
    store(
      t,
      "UPDATE dashboard_sessions SET expires_ms = ? WHERE cookie_hash = ?",
      Date.now() - 1,
      sha256(session.cookie.slice("cairn_session=".length)),
    );
    const answer = await fetch(`${t.server.url}/auth/session`, {
      headers: { cookie: session.cookie },
    });
    expect(answer.status).toBe(401);
    expect((await answer.json()).message).toContain("expired");
    expect(answer.headers.get("set-cookie")).toContain("Max-Age=0");
    const api = await fetch(`${t.server.url}/analytics/traces`, {
      headers: { cookie: session.cookie },
    });
    expect(api.status).toBe(401);
  });

  it.each([
    ["guessed", `cairn_session=${"A".repeat(43)}`],
    ["garbled", "cairn_session=%%%;;=="],
    ["too long", `cairn_session=${"A".repeat(4000)}`],
    ["empty", "cairn_session="],
    ["of another name", `session=${"A".repeat(43)}`],
  ])("refuses a cookie that is %s (401)", async (_, cookie) => {
    for (const path of ["/auth/session", "/analytics/traces"]) {
      const answer = await fetch(`${t.server.url}${path}`, { headers: { cookie } });
      expect(answer.status, path).toBe(401);
      expect((await answer.json()).error, path).toBe("unauthorized");
    }
  });

  it("answers /auth/session without a cookie with 401", async () => {
    const answer = await fetch(`${t.server.url}/auth/session`);
    expect(answer.status).toBe(401);
    expect((await answer.json()).message).toContain("not signed in");
  });

  it("makes codes only with a key: not with a dashboard session", async () => {
    const session = await signIn(t);
    const answer = await fetch(`${t.server.url}/auth/login-codes`, {
      method: "POST",
      headers: fromDashboard(t, session),
    });
    expect(answer.status).toBe(403);
    expect((await answer.json()).error).toBe("forbidden");
    expect((await fetch(`${t.server.url}/auth/login-codes`, { method: "POST" })).status).toBe(401);
  });

  it("documents every sign-in route in the OpenAPI document", async () => {
    const document = await (await fetch(`${t.server.url}/openapi.json`)).json();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/auth/login-codes",
        "/login",
        "/auth/login",
        "/auth/session",
        "/auth/logout",
        "/ui/assets/{file}",
        "/ui/{page}",
      ]),
    );
    expect(document.paths["/login"].get.security).toEqual([]);
    expect(document.paths["/auth/login-codes"].post.security).toEqual([{ apiKey: [] }]);
    expect(document.paths["/auth/logout"].post.security).toEqual([{ dashboardSession: [] }]);
    expect(Object.keys(document.paths["/auth/logout"].post.responses)).toEqual(
      expect.arrayContaining(["204", "401", "403"]),
    );
    expect(document.components.securitySchemes.dashboardSession).toEqual({
      type: "apiKey",
      in: "cookie",
      name: "cairn_session",
    });
    expect(readFileSync(new URL("../../README.md", import.meta.url), "utf8")).toContain(
      "POST /auth/login-codes",
    );
  });
});

describe("failed sign-ins", () => {
  it.each([
    ["used, expired or unknown codes", "code"],
    ["bad keys on the sign-in page", "key"],
    ["cookies that stand for no session", "cookie"],
  ])("count %s toward the failed-authentication limit of the address", async (_, kind) => {
    const t = await startTestServer({
      dashboard: { directory: fakeDashboard() },
      failedAuthLimit: { requestsPerSecond: 0.001, burst: 3 },
    });
    try {
      const fail = () =>
        kind === "code"
          ? fetch(`${t.server.url}/login?code=${"B".repeat(32)}`, { redirect: "manual" })
          : kind === "key"
            ? fetch(`${t.server.url}/auth/login`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ apiKey: "cairn_wrong-key-000000000000" }),
              })
            : fetch(`${t.server.url}/analytics/traces`, {
                headers: { cookie: `cairn_session=${"C".repeat(43)}` },
              });
      for (let attempt = 0; attempt < 3; attempt++) expect((await fail()).status).not.toBe(429);
      const limited = await fail();
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
      // The address waits whatever it sends next, a valid key or code included.
      expect((await t.call("GET", "/analytics/traces")).status).toBe(429);
    } finally {
      await t.stop();
    }
  });
});
