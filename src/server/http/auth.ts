import type { MiddlewareHandler } from "hono";
import type { Project, ProjectStore } from "../store/projects.js";
import { ApiError } from "./api-error.js";

export interface AuthVariables {
  project: Project;
  /** The key that made the request, for audit records (never the key itself). */
  actor: string;
}

/** The API key a request carries: `X-API-Key`, else `Authorization: Bearer`; trimmed. */
export function apiKeyOf(header: (name: string) => string | undefined): string | undefined {
  const key = header("x-api-key") ?? /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1];
  return key?.trim();
}

/**
 * The API key (`X-API-Key`, or `Authorization: Bearer`) picks the project; every handler
 * after this one sees only that project's data.
 */
export function requireApiKey(
  projects: ProjectStore,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const key = apiKeyOf((name) => c.req.header(name));
    if (key === undefined || key === "") {
      throw new ApiError(
        "unauthorized",
        "no API key: send it in the X-API-Key header (or Authorization: Bearer)",
      );
    }
    const caller = projects.callerForKey(key);
    if (caller === undefined) throw new ApiError("unauthorized", "the API key is not valid");
    c.set("project", caller.project);
    c.set("actor", caller.actor);
    await next();
  };
}
