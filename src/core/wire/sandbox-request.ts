import { z } from "zod";
import {
  cpuCountSchema,
  diskMBSchema,
  diskRangeMB,
  memoryMBSchema,
  templateCpuSchema,
  templateMemorySchema,
} from "./sandbox-sizes.js";

/** A tag key: 1-63 letters, digits, `_ . - /`, starting with a letter or digit. */
export const tagKeyPattern = /^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,62}$/;

const tagKey = z.string().regex(tagKeyPattern, "tag keys are 1-63 letters, digits, _ . - /");

/** Keys a JavaScript object cannot hold as data without changing its prototype or meaning. */
const reservedTagKeys = ["__proto__", "constructor", "prototype"];

/** Tags of a sandbox: `key=value` pairs, as a record. */
export const sandboxTagsSchema = z
  // Typed as the record it must be; the checks below and the record decide what passes.
  .custom<Record<string, string>>()
  .superRefine((tags, context) => {
    // JSON.parse keeps "__proto__" as a key of its own, which a record would silently drop.
    if (typeof tags !== "object" || tags === null) return;
    for (const key of Object.keys(tags)) {
      if (reservedTagKeys.includes(key)) {
        context.addIssue({
          code: "custom",
          path: [key],
          message: `"${key}" is not allowed as a tag key`,
        });
      }
    }
  })
  .pipe(
    z
      .record(
        tagKey,
        z
          .string()
          .max(256)
          .refine((value) => !value.includes("\0"), "a tag value contains a NUL character"),
      )
      .refine((tags) => Object.keys(tags).length <= 50, "at most 50 tags"),
  );

/** The body of `POST /api/sandboxes`, with the defaults of DESIGN.md. */
export const createSandboxRequestSchema = z.strictObject({
  template: z.string().min(1).default("base"),
  /** Lifetime in seconds, from creation; extendable. */
  timeout: z.number().int().min(1).max(86_400).default(300),
  cpuCount: cpuCountSchema.default(1),
  memoryMB: memoryMBSchema.default(1024),
  diskMB: diskMBSchema.default(diskRangeMB.default),
  /** The secret store whose allowlist and secrets the sandbox's egress proxy uses. */
  secretStore: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "secretStore must name a secret store")
    .optional(),
  tags: sandboxTagsSchema.default({}),
});

/** A template of the node-network template schema: name, image, cpu and memory. */
export const sandboxTemplateSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and -"),
  image: z.string().min(1),
  cpu: templateCpuSchema,
  memory: templateMemorySchema,
});

export type CreateSandboxRequest = z.input<typeof createSandboxRequestSchema>;
export type ResolvedSandboxRequest = z.output<typeof createSandboxRequestSchema>;
export type SandboxTemplate = z.output<typeof sandboxTemplateSchema>;
export type SandboxTemplateInput = z.input<typeof sandboxTemplateSchema>;
