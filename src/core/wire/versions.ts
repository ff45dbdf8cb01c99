import { z } from "zod";

/** A published version of an app, as the API returns it. */
export const versionSchema = z.object({
  version_id: z.string().describe("ver_ + 24 hex"),
  version: z.string(),
  description: z.string(),
  created_at: z.string(),
  current: z.boolean(),
});

/** A publish or a rollback, with who (the key) and when. */
export const versionEventSchema = z.object({
  version_id: z.string(),
  version: z.string(),
  action: z.enum(["publish", "rollback"]),
  actor: z.string().describe("the API key that did it: key id and first characters"),
  at: z.string(),
});

/** `GET /versions`. */
export const versionListSchema = z.object({
  versions: z.array(versionSchema).describe("newest first"),
  history: z.array(versionEventSchema).describe("publishes and rollbacks, oldest first"),
});

/** `POST /versions/{id}/rollback`. */
export const rollbackResultSchema = versionSchema.extend({
  rolled_back_by: z.string(),
  rolled_back_at: z.string(),
});

export type RollbackResult = z.infer<typeof rollbackResultSchema>;
export type Version = z.infer<typeof versionSchema>;
export type VersionEvent = z.infer<typeof versionEventSchema>;
export type VersionList = z.infer<typeof versionListSchema>;
