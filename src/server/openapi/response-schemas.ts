import { z } from "zod";
import { errorStatuses } from "../http/api-error.js";

const codes = Object.keys(errorStatuses) as [
  keyof typeof errorStatuses,
  ...Array<keyof typeof errorStatuses>,
];

export const errorBodySchema = z.object({
  error: z.enum(codes).describe("a stable snake_case code"),
  message: z.string().describe("what happened and what to do, as a sentence"),
  sandbox_id: z.string().optional().describe("sandbox errors: the sandbox concerned"),
  reason: z
    .enum(["stopped", "expired", "failed", "runner_unavailable"])
    .optional()
    .describe("sandbox_unavailable: why the sandbox cannot take work"),
  detail: z
    .string()
    .optional()
    .describe("sandbox_unavailable with runner_unavailable: what the runner says of it"),
});

export const ingestResultSchema = z.object({
  accepted: z.number().int().describe("spans stored by this request"),
  duplicates: z.number().int().describe("spans already stored (a retried batch), skipped"),
});

export {
  traceDetailSchema,
  traceListSchema,
  traceSummarySchema,
} from "../../core/wire/traces.js";
export { rollbackResultSchema, versionListSchema } from "../../core/wire/versions.js";
