import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { DashboardSessionRepository } from "../store/store.js";
import { isHttps } from "./same-origin.js";
import type { DashboardSession, SessionRefusal } from "./session-store.js";

/** The cookie a signed-in browser carries: HttpOnly, so no script of a page ever reads it. */
export const sessionCookieName = "cairn_session";

const signInAgain = "sign in again (`cairn open` prints a link)";

/** What a 401 says of a cookie that stands for no session. */
export const refusalMessages: Readonly<Record<SessionRefusal, string>> = {
  unknown: `the dashboard session cookie is not valid; ${signInAgain}`,
  expired: `the dashboard session has expired; ${signInAgain}`,
  revoked: `the dashboard session was signed out; ${signInAgain}`,
};

/**
 * The session the request's cookie stands for; `none` when it has no cookie, else why the
 * cookie does not work.
 */
export async function sessionOfRequest(
  c: Context,
  sessions: DashboardSessionRepository,
): Promise<DashboardSession | SessionRefusal | "none"> {
  const cookie = getCookie(c, sessionCookieName);
  if (cookie === undefined || cookie === "") return "none";
  return sessions.find(cookie);
}

/** Sets the session cookie on the answer: the whole site, same-site requests only. */
export function setSessionCookie(c: Context, cookie: string, expiresAtMs: number, now: number) {
  setCookie(c, sessionCookieName, cookie, {
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c),
    maxAge: Math.max(0, Math.round((expiresAtMs - now) / 1000)),
  });
}

/** Tells the browser to drop the session cookie. */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, sessionCookieName, {
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c),
  });
}
