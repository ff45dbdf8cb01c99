import type { Context } from "hono";
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { keySignInSchema } from "../../core/wire/dashboard-session.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables, FailedAuthentications } from "../http/auth.js";
import { ownOrigin } from "../http/own-origin.js";
import { readJson } from "../http/read-json.js";
import type { Project } from "../store/projects.js";
import type { DashboardSessionRepository, ProjectRepository } from "../store/store.js";
import { requireSameOrigin, requireSessionRequest } from "./same-origin.js";
import {
  clearSessionCookie,
  refusalMessages,
  sessionCookieName,
  sessionOfRequest,
  setSessionCookie,
} from "./session-cookie.js";
import type { DashboardSession } from "./session-store.js";

export interface SignInParts {
  readonly projects: ProjectRepository;
  readonly sessions: DashboardSessionRepository;
  readonly failures: FailedAuthentications;
  readonly now: () => number;
}

/**
 * Signing in without a key (they come before it is asked for): `GET /login?code=` (a one-time
 * link), `POST /auth/login` (the key, once, from the sign-in page), `GET /auth/session` and
 * `POST /auth/logout`. Each refused code, key or cookie counts as a failed authentication of the
 * client's address, as a refused API key does.
 */
export function signInRoutes(parts: SignInParts): Hono {
  const { projects, sessions, failures, now } = parts;
  const app = new Hono();

  const startSession = async (
    c: Context,
    signedIn: { session: DashboardSession; cookie: string },
  ) => {
    // The browser's earlier session, which its new cookie replaces, ends now.
    const earlier = await sessionOfRequest(c, sessions);
    if (typeof earlier === "object") await sessions.revoke(earlier.id);
    setSessionCookie(c, signedIn.cookie, signedIn.session.expiresAtMs, now());
  };

  app.get("/login", async (c) => {
    c.header("cache-control", "no-store");
    c.header("referrer-policy", "no-referrer");
    // A link checker or preview asks with HEAD: it must not use the code up.
    if (c.req.method === "HEAD") return c.body(null, 204);
    await failures.check(c);
    const result = await sessions.signInWithCode(c.req.query("code") ?? "");
    if (typeof result === "string") {
      await failures.record(c);
      return c.redirect(`/ui/login?error=${result}`, 303);
    }
    await startSession(c, result);
    return c.redirect("/ui/", 303);
  });

  app.post("/auth/login", async (c) => {
    c.header("cache-control", "no-store");
    await failures.check(c);
    requireSameOrigin(c, false);
    const parsed = keySignInSchema.safeParse(await readJson(c.req.raw, { quoteBody: false }));
    if (!parsed.success) {
      throw new ApiError(
        "invalid_request",
        `the body must be {"apiKey": "<the project's API key>"}: ${describeIssues(parsed.error)}`,
      );
    }
    const caller = await projects.callerForKey(parsed.data.apiKey.trim());
    if (caller === undefined) {
      await failures.record(c);
      throw new ApiError("unauthorized", "the API key is not valid");
    }
    const signedIn = await sessions.signIn(caller.project.id, caller.actor);
    await startSession(c, signedIn);
    return c.json(answer(caller.project, signedIn.session));
  });

  app.get("/auth/session", async (c) => {
    c.header("cache-control", "no-store");
    await failures.check(c);
    const session = await liveSession(c);
    const project = await projects.byId(session.projectId);
    if (project === undefined) throw new ApiError("unauthorized", refusalMessages.unknown);
    return c.json(answer(project, session));
  });

  app.post("/auth/logout", async (c) => {
    c.header("cache-control", "no-store");
    await failures.check(c);
    const session = await liveSession(c);
    requireSessionRequest(c, session.csrfToken);
    await sessions.revoke(session.id);
    clearSessionCookie(c);
    return c.body(null, 204);
  });

  /** The request's live session, or the 401 (the cookie dropped, a bad one counted). */
  async function liveSession(c: Context): Promise<DashboardSession> {
    const found = await sessionOfRequest(c, sessions);
    if (typeof found === "object") return found;
    if (found !== "none") await failures.record(c);
    if (getCookie(c, sessionCookieName) !== undefined) clearSessionCookie(c);
    throw new ApiError(
      "unauthorized",
      found === "none"
        ? "not signed in: the request has no dashboard session cookie"
        : refusalMessages[found],
    );
  }

  return app;
}

/**
 * `POST /auth/login-codes`, behind the API key: a one-time sign-in link for the caller's
 * project, as `cairn dev` and `cairn open` print. Only a key makes one: a dashboard session or
 * a sandbox token that could would outlive its own end.
 */
export function loginCodeRoutes(
  sessions: DashboardSessionRepository,
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.post("/auth/login-codes", async (c) => {
    if (c.get("dashboardSessionId") !== undefined || c.get("sandboxTokenId") !== undefined) {
      throw new ApiError(
        "forbidden",
        "a sign-in code is made with the project's API key (cairn open); a dashboard session or sandbox token cannot make one",
      );
    }
    const { code, expiresAtMs } = await sessions.createCode(c.get("project").id, c.get("actor"));
    c.header("cache-control", "no-store");
    return c.json(
      {
        url: `${ownOrigin(c) ?? ""}/login?code=${code}`,
        code,
        expiresAt: new Date(expiresAtMs).toISOString(),
      },
      201,
    );
  });
  return app;
}

function answer(project: Project, session: DashboardSession) {
  return {
    project: { id: project.id, name: project.name },
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAtMs).toISOString(),
  };
}
