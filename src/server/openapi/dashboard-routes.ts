import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  dashboardSessionSchema,
  keySignInSchema,
  loginCodeSchema,
} from "../../core/wire/dashboard-session.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const cookie = [{ dashboardSession: [] }];
const setCookie = {
  "set-cookie": {
    description:
      "cairn_session=<256-bit random>; HttpOnly; SameSite=Strict; Path=/; Max-Age=604800 (and Secure over https)",
    schema: { type: "string" as const },
  },
};
const clearCookie = {
  "set-cookie": {
    description: "cairn_session=; Max-Age=0: the browser drops the cookie",
    schema: { type: "string" as const },
  },
};

/** The dashboard's pages and its sign-in routes in the OpenAPI document. */
export function dashboardRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  const csrfNote =
    "With the session cookie, a request that is not GET, HEAD or OPTIONS must carry the session's csrfToken in X-CSRF-Token and come from this origin (Origin, or without it Referer); a WebSocket upgrade must come from this origin. Otherwise 403 csrf_failed, and nothing is done.";
  return [
    {
      method: "post",
      path: "/auth/login-codes",
      summary: "A one-time sign-in link to the dashboard for the key's project",
      description:
        "The code (192 random bits) works once, within 10 minutes; it is stored as its SHA-256. Only an API key makes one: a dashboard session or a sandbox token is refused (403). `cairn dev` and `cairn open` print such a link.",
      responses: {
        201: json(loginCodeSchema, "the link"),
        ...errors("forbidden"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/login",
      summary: "Sign in with a one-time code: sets the session cookie and goes to the dashboard",
      description:
        "A used, expired or unknown code sets no cookie and goes to the sign-in page with error=code_used, code_expired or code_invalid; each counts as a failed authentication of the client's address (past the limit: 429). HEAD does not use the code up.",
      security: [],
      request: {
        query: z.object({ code: z.string().describe("the code of POST /auth/login-codes") }),
      },
      responses: {
        303: {
          description:
            "Location /ui/ with the session cookie; or /ui/login?error=code_used|code_expired|code_invalid without one",
          headers: setCookie,
        },
        ...errors("rate_limited"),
      },
    },
    {
      method: "post",
      path: "/auth/login",
      summary: "Exchange the project's API key, once, for a dashboard session cookie",
      description:
        "For the dashboard's sign-in page: the key is not kept by the browser, the HttpOnly cookie stands for it. A key that is no project's is 401 and counts as a failed authentication. A request whose Origin (or Referer) is another origin is 403 csrf_failed.",
      security: [],
      request: { body: { content: { "application/json": { schema: keySignInSchema } } } },
      responses: {
        200: { ...json(dashboardSessionSchema, "signed in"), headers: setCookie },
        ...errors("invalid_request", "unsupported_media_type", "csrf_failed"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/auth/session",
      summary: "The project the session cookie signs in, and its CSRF token",
      description:
        "401 without a cookie, or with one that is unknown, expired (7 days after sign-in, fixed) or signed out; a cookie that does not work is also cleared.",
      security: cookie,
      responses: { 200: json(dashboardSessionSchema, "the session"), ...common },
    },
    {
      method: "post",
      path: "/auth/logout",
      summary: "Sign out: the session ends now and its cookie is cleared",
      description: `${csrfNote} Afterwards the cookie is refused (401) wherever it is sent.`,
      security: cookie,
      request: {
        headers: z.object({ "x-csrf-token": z.string().describe("the session's csrfToken") }),
      },
      responses: {
        204: { description: "signed out", headers: clearCookie },
        ...errors("csrf_failed"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/ui/assets/{file}",
      summary: "A file of the dashboard's build (hashed name), cached for a year",
      description:
        "Cache-Control: public, max-age=31536000, immutable; a precompressed .br or .gz sibling is sent when Accept-Encoding takes it. A name with .., a separator, a NUL or a link leading out of the folder is 404.",
      security: [],
      request: { params: z.object({ file: z.string() }) },
      responses: { 200: { description: "the file" }, ...errors("not_found") },
    },
    {
      method: "get",
      path: "/ui/{page}",
      summary: "The dashboard: index.html for every page of it (/ui, /ui/traces, …)",
      description: `Cache-Control: no-cache, with an ETag; a strict Content-Security-Policy, X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer. 503 with a page saying to run npm run build when the dashboard is not built; GET / redirects here. The dashboard calls the API with its session cookie. ${csrfNote}`,
      security: [],
      request: { params: z.object({ page: z.string().describe("any path under /ui/") }) },
      responses: {
        200: { description: "index.html", content: { "text/html": { schema: z.string() } } },
        503: {
          description: "the dashboard is not built",
          content: { "text/html": { schema: z.string() } },
        },
      },
    },
  ];
}
