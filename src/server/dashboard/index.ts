import type { Context } from "hono";
import { Hono } from "hono";
import type { AuthVariables, FailedAuthentications } from "../http/auth.js";
import type { Caller } from "../store/projects.js";
import type { DashboardSessionRepository, ProjectRepository } from "../store/store.js";
import { dashboardCandidates } from "./directory.js";
import { requireSessionRequest } from "./same-origin.js";
import { refusalMessages, sessionOfRequest } from "./session-cookie.js";
import { loginCodeRoutes, signInRoutes } from "./sign-in-routes.js";
import { staticRoutes } from "./static-files.js";

/** Where the dashboard's files are, or `false` for a service without the dashboard. */
export type DashboardOption = { readonly directory?: string | undefined } | false;

export interface DashboardParts {
  readonly projects: ProjectRepository;
  readonly sessions: DashboardSessionRepository;
  readonly failures: FailedAuthentications;
  readonly option?: DashboardOption | undefined;
  /** The clock of the cookies' lifetimes, in ms since the epoch (the store's). Default Date.now. */
  readonly now?: () => number;
}

export interface Dashboard {
  /** `/`, `/ui…`, `/login` and `/auth/login|session|logout`: served before any key is asked. */
  readonly publicRoutes: Hono;
  /** `POST /auth/login-codes`: served behind the API key. */
  readonly keyRoutes: Hono<{ Variables: AuthVariables }>;
  /**
   * The session cookie as a way in (requireApiKey's alternative): the caller, the 401's reason,
   * or undefined when the request has no cookie. Throws 403 `csrf_failed` for a request from
   * another origin, or one that changes something without the session's token.
   */
  readonly caller: (c: Context) => Promise<Caller | string | undefined>;
}

/** The dashboard: its files, signing in, and the session cookie as a way into the API. */
export function createDashboard(parts: DashboardParts): Dashboard {
  if (parts.option === false) {
    return { publicRoutes: new Hono(), keyRoutes: new Hono(), caller: async () => undefined };
  }
  const now = parts.now ?? Date.now;
  const { sessions } = parts;
  const directory = parts.option?.directory;
  const publicRoutes = new Hono()
    .route("/", staticRoutes(directory === undefined ? dashboardCandidates() : [directory]))
    .route("/", signInRoutes({ ...parts, sessions, now }));
  return {
    publicRoutes,
    keyRoutes: loginCodeRoutes(sessions),
    caller: async (c) => {
      const session = await sessionOfRequest(c, sessions);
      if (session === "none") return undefined;
      if (typeof session === "string") return refusalMessages[session];
      const project = await parts.projects.byId(session.projectId);
      if (project === undefined) return refusalMessages.unknown;
      requireSessionRequest(c, session.csrfToken);
      return { project, actor: `dashboard:${session.id}`, dashboardSessionId: session.id };
    },
  };
}
