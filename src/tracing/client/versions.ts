import { z } from "zod";
import { ConfigurationError } from "../../core/errors/index.js";
import {
  type RollbackResult,
  rollbackResultSchema,
  type Version,
  type VersionEvent,
  versionListSchema,
  versionSchema,
} from "../../core/wire/versions.js";
import { describeIssues } from "../../core/zod-message.js";
import { requestService } from "./request.js";

export interface PublishVersionOptions {
  /** The version, e.g. a semver `1.4.0`. */
  version: string;
  /** What changed. */
  description?: string;
  /** `metadata.changelog` is taken as the description when there is none. */
  metadata?: { changelog?: string };
}

const publishSchema = z.strictObject({
  version: z.string().min(1),
  description: z.string().optional(),
  metadata: z.object({ changelog: z.string().optional() }).optional(),
});

/**
 * Publishes a version of your app and makes it current.
 *
 * @example
 * await publishVersion({ version: "1.4.0", description: "cheaper retrieval" });
 */
export async function publishVersion(options: PublishVersionOptions): Promise<Version> {
  const parsed = publishSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(`publishVersion(): ${describeIssues(parsed.error, "option")}`);
  }
  const { version, description, metadata } = parsed.data;
  return requestService(
    "POST",
    "/versions",
    { version, description: description ?? metadata?.changelog ?? "" },
    versionSchema,
  );
}

/**
 * Makes an earlier version current again, by its `ver_…` id or by its version string.
 *
 * @example
 * await rollback("1.3.2");
 */
export async function rollback(versionIdOrVersion: string): Promise<RollbackResult> {
  let versionId = versionIdOrVersion;
  if (!versionIdOrVersion.startsWith("ver_")) {
    const found = (await listVersions()).find((each) => each.version === versionIdOrVersion);
    if (found === undefined) {
      throw new ConfigurationError(
        `rollback(): no published version "${versionIdOrVersion}"; listVersions() shows them`,
      );
    }
    versionId = found.version_id;
  }
  return requestService(
    "POST",
    `/versions/${encodeURIComponent(versionId)}/rollback`,
    undefined,
    rollbackResultSchema,
  );
}

/** Every published version, newest first; the current one has `current: true`. */
export async function listVersions(): Promise<Version[]> {
  return (await requestService("GET", "/versions", undefined, versionListSchema)).versions;
}

/** Publishes and rollbacks, oldest first. */
export async function versionHistory(): Promise<VersionEvent[]> {
  return (await requestService("GET", "/versions", undefined, versionListSchema)).history;
}

/** The current version, or null when none is published. */
export async function currentVersion(): Promise<Version | null> {
  const versions = await listVersions();
  return versions.find((each) => each.current) ?? null;
}
