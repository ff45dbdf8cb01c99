// What the dashboard's server tests share: a fake build of the dashboard (not the real SPA's),
// signing in by a one-time link as a browser would, and raw HTTP requests whose path is sent as
// written (fetch would resolve `..` before sending it).

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { TestServer } from "./helpers.js";

/** A folder laid out as the dashboard's build: index.html and hashed files under assets/. */
export function fakeDashboard(): string {
  const directory = mkdtempSync(join(tmpdir(), "cairn-dashboard-"));
  mkdirSync(join(directory, "assets"));
  writeFileSync(
    join(directory, "index.html"),
    '<!doctype html><html lang="en"><head><title>Cairn</title><script type="module" src="/ui/assets/app-3f2a9c.js"></script></head><body><div id="root"></div></body></html>\n',
  );
  writeFileSync(join(directory, "assets", "app-3f2a9c.js"), "document.body.dataset.ran = 'yes';\n");
  writeFileSync(join(directory, "assets", "style-77aa01.css"), "body { color: black }\n");
  writeFileSync(
    join(directory, "assets", "logo-01.svg"),
    "<svg xmlns='http://www.w3.org/2000/svg'/>",
  );
  return directory;
}

/** The session a one-time link starts: the cookie header to send back, and the CSRF token. */
export interface SignedIn {
  readonly cookie: string;
  readonly setCookie: string;
  readonly csrfToken: string;
  readonly projectId: string;
}

/** Asks for a code with the server's key, follows the link, and reads the session. */
export async function signIn(t: TestServer): Promise<SignedIn> {
  const created = await t.call("POST", "/auth/login-codes");
  expect(created.status).toBe(201);
  const { url } = (await created.json()) as { url: string };
  const login = await fetch(url, { redirect: "manual" });
  expect(login.status).toBe(303);
  expect(login.headers.get("location")).toBe("/ui/");
  const setCookie = login.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0] ?? "";
  const session = await fetch(`${t.server.url}/auth/session`, { headers: { cookie } });
  expect(session.status).toBe(200);
  const body = (await session.json()) as { csrfToken: string; project: { id: string } };
  return { cookie, setCookie, csrfToken: body.csrfToken, projectId: body.project.id };
}

/** The headers a page of the dashboard itself sends with a change: cookie, token, Origin. */
export function fromDashboard(t: TestServer, session: SignedIn): Record<string, string> {
  return { cookie: session.cookie, "x-csrf-token": session.csrfToken, origin: t.server.url };
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** `GET path` with the path sent byte for byte as given, and the body as it came (not decoded). */
export function rawGet(
  base: string,
  path: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const sent = request({ host: hostname, port, path, method, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () =>
        resolve({
          status: answer.statusCode ?? 0,
          headers: answer.headers,
          body: Buffer.concat(chunks),
        }),
      );
    });
    sent.on("error", reject);
    sent.end();
  });
}
