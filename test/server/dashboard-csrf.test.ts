import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { fakeDashboard, fromDashboard, type SignedIn, signIn } from "./dashboard-helpers.js";
import { addProject, resource, span, startTestServer, type TestServer } from "./helpers.js";

// What a page elsewhere can make a signed-in browser send: the session cookie rides along, but
// the page cannot read the CSRF token or set the Origin. Each attack is refused (403) before
// the route runs, and nothing is stored.
describe("a signed-in browser attacked from other pages", () => {
  let t: TestServer;
  let directory: string;
  let session: SignedIn;
  const publish = (headers: Record<string, string>, version: string) =>
    fetch(`${t.server.url}/versions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ version, description: "attack" }),
    });
  const versions = async () =>
    ((await (await t.call("GET", "/versions")).json()).versions as Array<{ version: string }>).map(
      (each) => each.version,
    );

  beforeAll(async () => {
    directory = fakeDashboard();
    t = await startTestServer({
      dashboard: { directory },
      failedAuthLimit: { requestsPerSecond: 1000, burst: 1000 },
    });
    session = await signIn(t);
  });
  afterAll(async () => {
    await t.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  async function expectRefused(answer: Response, check: RegExp): Promise<void> {
    expect(answer.status).toBe(403);
    const body = await answer.json();
    expect(body.error).toBe("csrf_failed");
    expect(body.message).toMatch(check);
  }

  it("refuses a cross-origin POST with the cookie and no token, and stores nothing", async () => {
    await expectRefused(
      await publish({ cookie: session.cookie, origin: "http://evil.example" }, "6.6.6"),
      /Origin \(http:\/\/evil\.example\) is not this service's origin/,
    );
    expect(await versions()).not.toContain("6.6.6");
  });

  it("refuses a same-origin POST without the token, or with a wrong one", async () => {
    const base = { cookie: session.cookie, origin: t.server.url };
    await expectRefused(await publish(base, "6.6.7"), /X-CSRF-Token header is missing/);
    await expectRefused(
      // The last character changed, to one it is not (a token ending in A stayed right).
      await publish(
        {
          ...base,
          "x-csrf-token": `${session.csrfToken.slice(0, -1)}${session.csrfToken.endsWith("A") ? "B" : "A"}`,
        },
        "6.6.8",
      ),
      /not this session's token/,
    );
    await expectRefused(
      await publish({ ...base, "x-csrf-token": "" }, "6.6.9"),
      /X-CSRF-Token header is missing/,
    );
    expect(await versions()).toEqual([]);
  });

  it("refuses the right token from a forged or foreign Origin", async () => {
    const port = new URL(t.server.url).port;
    for (const origin of [
      "http://evil.example",
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://127.0.0.1:${port}.evil.example`,
      "null",
      "not a url",
    ]) {
      const answer = await publish(
        { cookie: session.cookie, "x-csrf-token": session.csrfToken, origin },
        "7.0.0",
      );
      expect(answer.status, origin).toBe(403);
      expect((await answer.json()).error, origin).toBe("csrf_failed");
    }
    expect(await versions()).toEqual([]);
  });

  it("refuses a request with neither Origin nor Referer, and judges by Referer without Origin", async () => {
    const headers = { cookie: session.cookie, "x-csrf-token": session.csrfToken };
    await expectRefused(await publish(headers, "8.0.0"), /neither an Origin nor a Referer/);
    await expectRefused(
      await publish({ ...headers, referer: "http://evil.example/ui/versions" }, "8.0.1"),
      /Referer \(http:\/\/evil\.example\)/,
    );
    expect(await versions()).toEqual([]);
    const fromPage = await publish({ ...headers, referer: `${t.server.url}/ui/versions` }, "8.0.2");
    expect(fromPage.status).toBe(201);
  });

  it("takes the dashboard's own requests, and GETs without a token", async () => {
    expect((await publish(fromDashboard(t, session), "9.0.0")).status).toBe(201);
    const read = await fetch(`${t.server.url}/versions`, {
      headers: { cookie: session.cookie, origin: "http://evil.example" },
    });
    // A read runs, but no page elsewhere may see its answer: no credentials allowed by CORS.
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("leaves API-key requests alone: no token or Origin needed", async () => {
    const answer = await publish(
      { "x-api-key": t.apiKey, origin: "http://evil.example" },
      "10.0.0",
    );
    expect(answer.status).toBe(201);
  });

  it("refuses a cross-site WebSocket on the cookie (exec), and one without an Origin", async () => {
    const path = `/api/sandboxes/sbx_${"a".repeat(24)}/exec/ex_${"b".repeat(24)}`;
    const statusOf = (headers: Record<string, string>, origin?: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${t.server.url.replace("http", "ws")}${path}`, {
          headers,
          ...(origin === undefined ? {} : { origin }),
        });
        socket.on("unexpected-response", (_request, response) => {
          resolve(response.statusCode ?? 0);
          socket.terminate();
        });
        socket.on("open", () => {
          socket.terminate();
          resolve(101);
        });
        socket.on("error", (error) => {
          if (!/Unexpected server response/.test(error.message)) reject(error);
        });
      });
    expect(await statusOf({ cookie: session.cookie }, "http://evil.example")).toBe(403);
    expect(await statusOf({ cookie: session.cookie })).toBe(403);
    // From the dashboard's origin the upgrade gets past auth, to the sandbox API (none here).
    const own = await statusOf({ cookie: session.cookie }, t.server.url);
    expect(own).not.toBe(403);
    expect(own).not.toBe(401);
    // A key needs no Origin.
    expect(await statusOf({ "x-api-key": t.apiKey }, "http://evil.example")).not.toBe(403);
  });
});

describe("sessions of two projects", () => {
  let t: TestServer;
  let directory: string;
  const otherKey = "project-b-key-0123456789";
  const traceA = `tr_${"a1".repeat(16)}`;
  const traceB = `tr_${"b2".repeat(16)}`;

  beforeAll(async () => {
    directory = fakeDashboard();
    t = await startTestServer({ dashboard: { directory } });
    await addProject(t, "project-b", otherKey);
    const asB = { "x-api-key": otherKey };
    await t.call("POST", "/traces", { resource, spans: [span({ trace_id: traceA, name: "a" })] });
    await t.call(
      "POST",
      "/traces",
      { resource, spans: [span({ trace_id: traceB, name: "b" })] },
      asB,
    );
  });
  afterAll(async () => {
    await t.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it("gives project A's code no access to project B's traces", async () => {
    const session = await signIn(t);
    const get = (path: string) =>
      fetch(`${t.server.url}${path}`, { headers: { cookie: session.cookie } });
    expect((await get(`/traces/${traceA}`)).status).toBe(200);
    expect((await get(`/traces/${traceB}`)).status).toBe(404);
    const list = await (await get("/analytics/traces?period_start=2020-01-01")).json();
    expect(list.traces.map((each: { trace_id: string }) => each.trace_id)).toEqual([traceA]);
  });

  it("signs B's code in to B only", async () => {
    const code = await (
      await t.call("POST", "/auth/login-codes", undefined, { "x-api-key": otherKey })
    ).json();
    const login = await fetch(code.url, { redirect: "manual" });
    const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
    const who = await (await fetch(`${t.server.url}/auth/session`, { headers: { cookie } })).json();
    expect(who.project.name).toBe("project-b");
    const get = (path: string) => fetch(`${t.server.url}${path}`, { headers: { cookie } });
    expect((await get(`/traces/${traceB}`)).status).toBe(200);
    expect((await get(`/traces/${traceA}`)).status).toBe(404);
  });

  it("lets an API key win over the cookie, and a bad key fail even with a good cookie", async () => {
    const session = await signIn(t);
    const withKeyB = await fetch(`${t.server.url}/traces/${traceB}`, {
      headers: { cookie: session.cookie, "x-api-key": otherKey },
    });
    expect(withKeyB.status).toBe(200);
    const withBadKey = await fetch(`${t.server.url}/traces/${traceA}`, {
      headers: { cookie: session.cookie, "x-api-key": "cairn_no-such-key-00000000" },
    });
    expect(withBadKey.status).toBe(401);
  });
});
