import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { CreateOptions } from "./runner-settings.js";
import type { RunnerTemplate } from "./templates.js";

/** The record of a sandbox about to start (status `creating`), as asked for, at `now`. */
export function newSandboxRecord(
  id: string,
  template: RunnerTemplate,
  options: CreateOptions,
  unenforcedLimits: SandboxRecord["unenforcedLimits"],
  now = new Date(),
): SandboxRecord {
  return {
    id,
    template: template.name,
    status: "creating",
    cpuCount: options.cpuCount,
    memoryMB: options.memoryMB,
    diskMB: options.diskMB,
    tags: options.tags,
    tagsLastUpdatedAt: now.toISOString(),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + options.timeout * 1000).toISOString(),
    endedAt: null,
    unenforcedLimits,
    failure: null,
    secretStore: options.secretStore ?? null,
  };
}
