import { z } from "zod";
import {
  cpuCountSchema,
  diskMBSchema,
  diskRangeMB,
  memoryMBSchema,
  templateCpuSchema,
  templateMemorySchema,
} from "./sandbox-sizes.js";

const tagKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,62}$/, "tag keys are 1-63 letters, digits, _ . - /");

/** Tags of a sandbox: `key=value` pairs, as a record. */
export const sandboxTagsSchema = z
  .record(tagKey, z.string().max(256))
  .refine((tags) => Object.keys(tags).length <= 50, "at most 50 tags");

/** The body of `POST /api/sandboxes`, with the defaults of DESIGN.md. */
export const createSandboxRequestSchema = z.strictObject({
  template: z.string().min(1).default("base"),
  /** Lifetime in seconds, from creation; extendable. */
  timeout: z.number().int().min(1).max(86_400).default(300),
  cpuCount: cpuCountSchema.default(1),
  memoryMB: memoryMBSchema.default(1024),
  diskMB: diskMBSchema.default(diskRangeMB.default),
  secretStore: z.string().min(1).optional(),
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
