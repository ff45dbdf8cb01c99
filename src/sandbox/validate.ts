import { ConfigurationError } from "../core/errors/index.js";
import {
  type CreateSandboxRequest,
  createSandboxRequestSchema,
  type ResolvedSandboxRequest,
  type SandboxTemplate,
  type SandboxTemplateInput,
  sandboxTemplateSchema,
} from "../core/wire/sandbox-request.js";
import { describeIssues } from "../core/zod-message.js";

/**
 * Checks sandbox options before they are sent, with the defaults filled in. Throws a
 * `ConfigurationError` that names each wrong field and the values it allows.
 *
 * @example
 * resolveSandboxRequest({ memoryMB: 2048 });
 * // ConfigurationError: sandbox: field "memoryMB": 2048 MB is not a memory tier; use one of 1024, 4096, …
 */
export function resolveSandboxRequest(options: CreateSandboxRequest = {}): ResolvedSandboxRequest {
  const parsed = createSandboxRequestSchema.safeParse(options);
  if (!parsed.success) throw new ConfigurationError(`sandbox: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** Reads a template in either notation of the template schema (`"500m"`/`"512Mi"` or integers). */
export function parseSandboxTemplate(template: SandboxTemplateInput): SandboxTemplate {
  const parsed = sandboxTemplateSchema.safeParse(template);
  if (!parsed.success) throw new ConfigurationError(`template: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
