import { randomBytes } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import type { VersionEvent, Version as VersionRecord } from "../../core/wire/versions.js";
import { transaction } from "./database.js";

/** A version's row, as both engines store it. */
export interface VersionRow {
  id: string;
  version: string;
  description: string;
  created_at: string;
}

/**
 * Versions of a project's app. Publishing one makes it current; rolling back makes an earlier
 * one current again. Both are kept in the history with who did it and when; nothing is erased.
 */
export class VersionStore {
  constructor(private readonly db: DatabaseSync) {}

  /** Publishes a new version and makes it current; undefined if `version` already exists. */
  publish(projectId: string, version: string, description: string, actor: string) {
    return transaction(this.db, (): VersionRecord | undefined => {
      const existing = this.db
        .prepare("SELECT id FROM versions WHERE project_id = ? AND version = ?")
        .get(projectId, version);
      if (existing !== undefined) return undefined;
      const row = newVersionRow(version, description);
      this.db
        .prepare(
          "INSERT INTO versions (id, project_id, version, description, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(row.id, projectId, version, description, row.created_at);
      this.record(projectId, row.id, "publish", actor, row.created_at);
      return { ...toRecord(row), current: true };
    });
  }

  /** Makes an existing version current again; undefined if the project has no such version. */
  rollback(projectId: string, versionId: string, actor: string) {
    return transaction(this.db, (): { version: VersionRecord; event: VersionEvent } | undefined => {
      const row = this.find(projectId, versionId);
      if (row === undefined) return undefined;
      const rolledBack = rollbackOf(row, actor);
      this.record(projectId, row.id, "rollback", actor, rolledBack.event.at);
      return rolledBack;
    });
  }

  /** Every version, newest first, with the current one marked. */
  list(projectId: string): VersionRecord[] {
    const current = this.currentId(projectId);
    const rows = this.db
      .prepare("SELECT * FROM versions WHERE project_id = ? ORDER BY created_at DESC, rowid DESC")
      .all(projectId) as unknown as VersionRow[];
    return rows.map((row) => ({ ...toRecord(row), current: row.id === current }));
  }

  current(projectId: string): VersionRecord | undefined {
    const id = this.currentId(projectId);
    const row = id === undefined ? undefined : this.find(projectId, id);
    return row === undefined ? undefined : { ...toRecord(row), current: true };
  }

  /** Publishes and rollbacks, oldest first. */
  history(projectId: string): VersionEvent[] {
    return this.db
      .prepare(
        `SELECT e.version_id, v.version, e.action, e.actor, e.at FROM version_events e
         JOIN versions v ON v.id = e.version_id WHERE e.project_id = ? ORDER BY e.id`,
      )
      .all(projectId) as unknown as VersionEvent[];
  }

  private currentId(projectId: string): string | undefined {
    const row = this.db
      .prepare(
        "SELECT version_id FROM version_events WHERE project_id = ? ORDER BY id DESC LIMIT 1",
      )
      .get(projectId) as { version_id: string } | undefined;
    return row?.version_id;
  }

  private find(projectId: string, versionId: string): VersionRow | undefined {
    return this.db
      .prepare("SELECT * FROM versions WHERE project_id = ? AND id = ?")
      .get(projectId, versionId) as VersionRow | undefined;
  }

  private record(projectId: string, versionId: string, action: string, actor: string, at: string) {
    this.db
      .prepare(
        "INSERT INTO version_events (project_id, version_id, action, actor, at) VALUES (?, ?, ?, ?, ?)",
      )
      .run(projectId, versionId, action, actor, at);
  }
}

/** A new version's row: its id, and now as its creation. */
export function newVersionRow(version: string, description: string): VersionRow {
  const id = `ver_${randomBytes(12).toString("hex")}`;
  return { id, version, description, created_at: new Date().toISOString() };
}

/** What a rollback to `row` answers: the version, current again, and the event, now. */
export function rollbackOf(
  row: VersionRow,
  actor: string,
): { version: VersionRecord; event: VersionEvent } {
  const at = new Date().toISOString();
  return {
    version: { ...toRecord(row), current: true },
    event: { version_id: row.id, version: row.version, action: "rollback", actor, at },
  };
}

export function toRecord(row: VersionRow): Omit<VersionRecord, "current"> {
  return {
    version_id: row.id,
    version: row.version,
    description: row.description,
    created_at: row.created_at,
  };
}
