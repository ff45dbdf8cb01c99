import type { MiddlewareHandler } from "hono";
import type { Project, ProjectStore } from "../store/projects.js";
import { ApiError } from "./api-error.js";

export interface AuthVariables {
  project: Project;
  /** The key that made the request, for audit records (never the key itself). */
  actor: string;
}

/**
 * The API key (`X-API-Key`, or `Authorization: Bearer`) picks the project; every handler
 * after this one sees only that project's data.
 */
export function requireApiKey(
  projects: ProjectStore,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    const header = c.req.header("x-api-key");
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const key = header ?? bearer;
    if (key === undefined || key.trim() === "") {
      throw new ApiError(
        "unauthorized",
        "no API key: send it in the X-API-Key header (or Authorization: Bearer)",
      );
    }
    const caller = projects.callerForKey(key.trim());
    if (caller === undefined) throw new ApiError("unauthorized", "the API key is not valid");
    c.set("project", caller.project);
    c.set("actor", caller.actor);
    await next();
  };
}
