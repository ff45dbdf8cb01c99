import { Hono } from "hono";
import { z } from "zod";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { VersionRepository } from "../store/store.js";

export const publishVersionSchema = z.strictObject({
  version: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, "letters, digits and . _ + - (a semver such as 1.4.0)"),
  description: z.string().max(10_000).default(""),
});

const versionIdPattern = /^ver_[0-9a-f]{24}$/;

/** Versions: publish, list, current, roll back; the history is kept. */
export function versionRoutes(versions: VersionRepository) {
  return new Hono<{ Variables: AuthVariables }>()
    .post("/versions", async (c) => {
      const body = await readJson(c.req.raw);
      const parsed = publishVersionSchema.safeParse(body);
      if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
      const { version, description } = parsed.data;
      const published = await versions.publish(
        c.get("project").id,
        version,
        description,
        c.get("actor"),
      );
      if (published === undefined) {
        throw new ApiError(
          "conflict",
          `version ${version} is already published; roll back to it with POST /versions/{version_id}/rollback`,
        );
      }
      return c.json(published, 201);
    })
    .get("/versions", async (c) => {
      const projectId = c.get("project").id;
      const [list, history] = await Promise.all([
        versions.list(projectId),
        versions.history(projectId),
      ]);
      return c.json({ versions: list, history });
    })
    .get("/versions/current", async (c) => {
      const current = await versions.current(c.get("project").id);
      if (current === undefined) {
        throw new ApiError(
          "not_found",
          "no version is published yet; publish one with POST /versions",
        );
      }
      return c.json(current);
    })
    .post("/versions/:versionId/rollback", async (c) => {
      const versionId = c.req.param("versionId");
      if (!versionIdPattern.test(versionId)) {
        throw new ApiError(
          "invalid_request",
          `"${versionId}" is not a version id; use the ver_… id that POST /versions returned`,
        );
      }
      const result = await versions.rollback(c.get("project").id, versionId, c.get("actor"));
      if (result === undefined) throw new ApiError("not_found", `no version ${versionId}`);
      return c.json({
        ...result.version,
        rolled_back_by: result.event.actor,
        rolled_back_at: result.event.at,
      });
    });
}
