import type { SandboxRecord } from "../../core/wire/sandbox.js";
import type { SandboxRecords } from "../../sandbox/runner/runner.js";

/** Statuses after which a sandbox's record no longer changes. */
const finalStatuses = new Set(["stopped", "failed", "expired"]);

/**
 * The runner's records, telling `changed` of every sandbox they write: created, running,
 * resized, re-tagged, stopping, stopped, failed, expired. Every change of state passes here, so
 * nothing has to poll the runner.
 */
export function reportingChanges(
  records: SandboxRecords,
  changed: (projectId: string, record: SandboxRecord) => void,
): SandboxRecords {
  // The project of each sandbox that may still change (a record does not name it).
  const projects = new Map<string, string>();
  return {
    insert(projectId, record) {
      records.insert(projectId, record);
      projects.set(record.id, projectId);
      changed(projectId, record);
    },
    update(record) {
      records.update(record);
      const projectId = projects.get(record.id);
      if (projectId === undefined) return;
      if (finalStatuses.has(record.status)) projects.delete(record.id);
      changed(projectId, record);
    },
    get: (projectId, id) => records.get(projectId, id),
    openSegment: (projectId, record, startMs) => records.openSegment(projectId, record, startMs),
    closeSegment: (sandboxId, endMs, cpuSeconds) =>
      records.closeSegment(sandboxId, endMs, cpuSeconds),
    updateOpenSegment: (sandboxId, cpuSeconds) => records.updateOpenSegment(sandboxId, cpuSeconds),
    markAbandoned: (reason, now) => records.markAbandoned(reason, now),
  };
}
