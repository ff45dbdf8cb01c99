import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardCandidates } from "../../src/server/dashboard/directory.js";
import { fakeDashboard, rawGet } from "./dashboard-helpers.js";
import { startTestServer, type TestServer } from "./helpers.js";

const csp =
  "default-src 'self'; connect-src 'self' ws://HOST wss://HOST; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const secret = "the contents of a file outside the dashboard";

describe("the dashboard's files", () => {
  let t: TestServer;
  let directory: string;
  let outside: string;
  beforeAll(async () => {
    directory = fakeDashboard();
    outside = mkdtempSync(join(tmpdir(), "cairn-outside-"));
    writeFileSync(join(outside, "secret.txt"), secret);
    writeFileSync(join(directory, "secret.txt"), secret);
    writeFileSync(join(directory, "assets", ".hidden"), secret);
    symlinkSync(join(outside, "secret.txt"), join(directory, "assets", "link-out.js"));
    symlinkSync(outside, join(directory, "assets", "folder-out"));
    mkdirSync(join(directory, "assets", "nested"));
    writeFileSync(join(directory, "assets", "nested", "chunk-9.js"), "export {};\n");
    const big = "export const words = 'the same words again and again; '.repeat(200);\n";
    writeFileSync(join(directory, "assets", "big-1.js"), big);
    writeFileSync(join(directory, "assets", "big-1.js.gz"), gzipSync(big));
    writeFileSync(join(directory, "assets", "big-1.js.br"), brotliCompressSync(big));
    t = await startTestServer({ dashboard: { directory } });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(directory, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("redirects / to /ui/", async () => {
    const answer = await fetch(`${t.server.url}/`, { redirect: "manual" });
    expect(answer.status).toBe(302);
    expect(answer.headers.get("location")).toBe("/ui/");
  });

  it.each([
    "/ui",
    "/ui/",
    "/ui/traces",
    "/ui/traces/tr_0123",
    "/ui/sessions",
    "/ui/login?error=code_used",
  ])(
    "answers %s with index.html, revalidated, under a strict policy, without a key",
    async (path) => {
      const answer = await fetch(`${t.server.url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(answer.headers.get("cache-control")).toBe("no-cache");
      const host = new URL(t.server.url).host;
      expect(answer.headers.get("content-security-policy")).toBe(csp.replaceAll("HOST", host));
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
      expect(answer.headers.get("referrer-policy")).toBe("no-referrer");
      expect(await answer.text()).toContain('<div id="root">');
    },
  );

  it("answers a matching If-None-Match with 304 and no body", async () => {
    const first = await fetch(`${t.server.url}/ui/traces`);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    const again = await rawGet(t.server.url, "/ui/sessions", { "if-none-match": etag ?? "" });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const changed = await rawGet(t.server.url, "/ui/", { "if-none-match": '"other"' });
    expect(changed.status).toBe(200);
  });

  it("serves a hashed asset with its type and a year's immutable cache", async () => {
    for (const [file, type] of [
      ["app-3f2a9c.js", "text/javascript; charset=utf-8"],
      ["style-77aa01.css", "text/css; charset=utf-8"],
      ["logo-01.svg", "image/svg+xml"],
      ["nested/chunk-9.js", "text/javascript; charset=utf-8"],
    ]) {
      const answer = await rawGet(t.server.url, `/ui/assets/${file}`);
      expect(answer.status, file).toBe(200);
      expect(answer.headers["content-type"], file).toBe(type);
      expect(answer.headers["cache-control"], file).toBe("public, max-age=31536000, immutable");
      expect(answer.headers["x-content-type-options"], file).toBe("nosniff");
    }
  });

  it("sends the precompressed sibling the client takes, else the file as it is", async () => {
    const plain = (await rawGet(t.server.url, "/ui/assets/big-1.js")).body.toString();
    const cases: Array<[string, string | undefined]> = [
      ["br, gzip", "br"],
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["gzip;q=0.5, br;q=0.4", "gzip"],
      ["*", "br"],
      ["identity", undefined],
      ["", undefined],
    ];
    for (const [accepted, encoding] of cases) {
      const answer = await rawGet(t.server.url, "/ui/assets/big-1.js", {
        "accept-encoding": accepted,
      });
      expect(answer.status, accepted).toBe(200);
      expect(answer.headers["content-encoding"], accepted).toBe(encoding);
      expect(answer.headers.vary, accepted).toBe("accept-encoding");
      expect(answer.headers["content-type"], accepted).toBe("text/javascript; charset=utf-8");
      expect(Number(answer.headers["content-length"]), accepted).toBe(answer.body.length);
      // fetch decodes what it is sent: it reads the file whichever encoding came.
      const decoded = await fetch(`${t.server.url}/ui/assets/big-1.js`, {
        headers: accepted === "" ? {} : { "accept-encoding": accepted },
      });
      expect(await decoded.text(), accepted).toBe(plain);
    }
    // A file without siblings is sent as it is to a client that takes br.
    const alone = await rawGet(t.server.url, "/ui/assets/app-3f2a9c.js", {
      "accept-encoding": "br",
    });
    expect(alone.headers["content-encoding"]).toBeUndefined();
    expect(alone.body.toString()).toContain("dataset.ran");
  });

  it("answers a missing asset with the API's JSON 404", async () => {
    const answer = await fetch(`${t.server.url}/ui/assets/app-0000.js`);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({
      error: "not_found",
      message: "no file at /ui/assets/app-0000.js",
    });
  });

  it.each([
    "/ui/assets/../secret.txt",
    "/ui/assets/../../secret.txt",
    "/ui/assets/%2e%2e/secret.txt",
    "/ui/assets/%2E%2E/%2e%2e/secret.txt",
    "/ui/assets/%2e%2e%2fsecret.txt",
    "/ui/assets/..%2fsecret.txt",
    "/ui/assets/..%2F..%2F..%2Fetc%2Fpasswd",
    "/ui/assets/%252e%252e%252fsecret.txt",
    "/ui/assets/nested/..%2f..%2fsecret.txt",
    "/ui/assets//etc/passwd",
    "/ui/assets/%2Fetc%2Fpasswd",
    "/ui/assets/link-out.js",
    "/ui/assets/folder-out/secret.txt",
    "/ui/assets/.hidden",
    "/ui/assets/app-3f2a9c.js%00.png",
    "/ui/assets/app-3f2a9c.js%00",
    "/ui/assets/%00",
    "/ui/assets/%ff%fe",
    "/ui/assets/..\\secret.txt",
    "/ui/assets/nested",
    "/ui/assets/",
  ])("never answers %s with a file outside assets/", async (path) => {
    const answer = await rawGet(t.server.url, path);
    expect(answer.body.toString()).not.toContain(secret);
    expect(answer.body.toString()).not.toContain("root:x:0:0");
    // A path the URL parser resolves out of /ui/assets is a page of the app (or, out of /ui, a
    // route that wants a key); anything still under it is a 404, or a 400 for bytes that are
    // not a valid request target.
    if (answer.status === 200) {
      expect(answer.headers["content-type"], path).toBe("text/html; charset=utf-8");
      expect(answer.body.toString()).toContain('<div id="root">');
    } else {
      expect([400, 401, 404], path).toContain(answer.status);
    }
  });

  it("answers HEAD as GET, without a body", async () => {
    const answer = await rawGet(t.server.url, "/ui/assets/app-3f2a9c.js", {}, "HEAD");
    expect(answer.status).toBe(200);
    expect(answer.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(answer.body.length).toBe(0);
  });

  it("never lets a page elsewhere read answers with credentials (no Access-Control-Allow-Credentials)", async () => {
    const preflight = await fetch(`${t.server.url}/versions`, {
      method: "OPTIONS",
      headers: {
        origin: "http://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, x-csrf-token",
      },
    });
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers") ?? "").not.toContain(
      "x-csrf-token",
    );
    for (const path of ["/auth/session", "/analytics/traces", "/ui/"]) {
      const answer = await fetch(`${t.server.url}${path}`, {
        headers: { origin: "http://evil.example" },
      });
      expect(answer.headers.get("access-control-allow-credentials"), path).toBeNull();
    }
  });
});

describe("a service whose dashboard is not built", () => {
  it("answers /ui with a 503 page saying to run npm run build, and the API keeps working", async () => {
    const empty = mkdtempSync(join(tmpdir(), "cairn-no-dashboard-"));
    const t = await startTestServer({ dashboard: { directory: empty } });
    try {
      const page = await fetch(`${t.server.url}/ui/traces`);
      expect(page.status).toBe(503);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(await page.text()).toContain("npm run build");
      expect((await fetch(`${t.server.url}/ui/assets/app.js`)).status).toBe(404);
      expect((await fetch(`${t.server.url}/health`)).status).toBe(200);
      expect((await t.call("GET", "/analytics/traces")).status).toBe(200);
      // Built meanwhile: served at once, without a restart.
      writeFileSync(join(empty, "index.html"), "<!doctype html><p>built</p>");
      const built = await fetch(`${t.server.url}/ui/`);
      expect(built.status).toBe(200);
      expect(await built.text()).toContain("built");
    } finally {
      await t.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("serves neither pages nor sign-in with dashboard: false", async () => {
    const t = await startTestServer({ dashboard: false });
    try {
      for (const path of ["/", "/ui/", "/ui/assets/app.js", "/login?code=x", "/auth/session"]) {
        const answer = await fetch(`${t.server.url}${path}`, { redirect: "manual" });
        expect(answer.status, path).toBe(401);
      }
      expect((await t.call("POST", "/auth/login-codes")).status).toBe(404);
    } finally {
      await t.stop();
    }
  });

  it("looks for the build next to the service, and in a clone's dist/dashboard", () => {
    expect(dashboardCandidates()).toContain(resolve("dist/dashboard"));
  });
});
