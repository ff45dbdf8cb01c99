import { z } from "zod";
import { sandboxTagsSchema } from "./sandbox-request.js";
import { sandboxStatuses } from "./sandbox-statuses.js";

export { type SandboxStatus, sandboxStatuses } from "./sandbox-statuses.js";

/** A sandbox as the API returns it. */
export const sandboxRecordSchema = z.object({
  id: z.string().describe("sbx_ + 24 hex"),
  template: z.string(),
  status: z.enum(sandboxStatuses),
  cpuCount: z.number().int(),
  memoryMB: z.number().int(),
  diskMB: z.number().int(),
  tags: sandboxTagsSchema,
  tagsLastUpdatedAt: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  endedAt: z.string().nullable(),
  /** Limits the host could not enforce (runner started with --allow-unenforced-limits). */
  unenforcedLimits: z.array(z.enum(["memory", "cpu", "pids", "disk"])),
  /** Why it failed, when it did. */
  failure: z.string().nullable(),
  /** The secret store its egress proxy uses; null: no egress at all. */
  secretStore: z.string().nullable().default(null),
});
export type SandboxRecord = z.infer<typeof sandboxRecordSchema>;

/** `GET /api/sandboxes`. */
export const sandboxListSchema = z.object({ sandboxes: z.array(sandboxRecordSchema) });

/** `PATCH /api/sandboxes/{id}`: extend the lifetime, resize CPU and memory live. */
export const updateSandboxRequestSchema = z
  .strictObject({
    /** Seconds from now until it expires. */
    timeout: z.number().int().min(1).max(86_400).optional(),
    cpuCount: z.number().int().optional(),
    memoryMB: z.number().int().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, "give timeout, cpuCount or memoryMB");

export const setTagsRequestSchema = z.strictObject({ tags: sandboxTagsSchema });

/** One group of `GET /api/usage`. */
export const usageGroupSchema = z.object({
  key: z.string().describe("the tag's value (or (untagged)), the sandbox id, or the template"),
  cpuSeconds: z.number(),
  memoryGBHours: z.number(),
  wallSeconds: z.number(),
  costUsd: z.number(),
  egressBytes: z.number().int().describe("bytes through the egress proxy, both ways"),
  sandboxes: z.number().int(),
});

export const usageReportSchema = z.object({
  period_start: z.string(),
  period_end: z.string(),
  group_by: z.string(),
  attribution: z.enum(["current", "at_time"]),
  prices: z.object({ memoryGBHourUsd: z.number(), cpuSecondUsd: z.number() }),
  groups: z.array(usageGroupSchema),
  totals: usageGroupSchema.omit({ key: true }),
});
export type UsageReport = z.infer<typeof usageReportSchema>;
export type UsageGroup = z.infer<typeof usageGroupSchema>;
